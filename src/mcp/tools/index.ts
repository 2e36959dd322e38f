import type { Role } from '../../store/keys';
import type { McpTool } from '../tool';
import { ingest, jobStatus } from './admin';
import { getDocument, getPassage, getSection, listDocuments } from './documents';
import { search } from './search';

/** Every MCP tool, in the order agents list them. */
export const MCP_TOOLS: readonly McpTool[] = [search, getDocument, getSection, getPassage, listDocuments, ingest, jobStatus];

/** The tools a session of this role is offered: admin tools only with an admin key. */
export const toolsFor = (role: Role | undefined): McpTool[] => MCP_TOOLS.filter((t) => t.role === 'reader' || role === 'admin');
