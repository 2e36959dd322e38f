// GraphiQL for ad-hoc queries, with the schema's docs; bundled, so it loads nothing from a CDN.
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import 'graphiql/graphiql.css';
import './graphiql-page.css';
import { createRoot } from 'react-dom/client';

const KEY = 'dhr.adminKey';
const key = sessionStorage.getItem(KEY);
// The console's admin key (kept in this tab's session) goes along, so mutations work here too.
const fetcher = createGraphiQLFetcher({ url: '/', headers: key ? { authorization: `Bearer ${key}` } : {} });

const DEFAULT_QUERY = `# DHR-GraphQL. Reads are public; mutations need an admin key (enter it once in the console's Admin tab).
{
  retrieve(question: "What is the capital of Norway?", k2: 5) {
    mode warnings
    passages {
      rank score passageScore documentScore
      answer { text sentence { text } }
      passage { titlePath text }
    }
  }
}
`;

createRoot(document.getElementById('graphiql')!).render(<GraphiQL fetcher={fetcher} defaultQuery={DEFAULT_QUERY} />);
