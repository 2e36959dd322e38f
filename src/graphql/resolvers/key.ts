import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { badUserInput, notFound } from '../../errors';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyListing, type Role } from '../../store/keys';
import type { Context } from '../context';
import { parseId } from '../ids';
import { ApiKey, ApiKeyRoleEnum, CreatedApiKey } from '../types/key';

/**
 * API keys over GraphQL (admin only), so keys can be made and revoked while the server runs:
 * keys are looked up per request (store/keys authenticateKey, no cache), so a new key works
 * and a revoked one is refused from the next request on.
 */
@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Authorized<Role>('admin')
  @Query(() => [ApiKey], { description: 'Every API key, revoked ones included, oldest first; never the keys themselves.' })
  async apiKeys(@Ctx() ctx: Context): Promise<ApiKey[]> {
    return (await listApiKeys(ctx.db)).map(toApiKey);
  }

  @Authorized<Role>('admin')
  @Mutation(() => CreatedApiKey, { description: 'Creates an API key and returns it: the only time it is shown.' })
  async createApiKey(
    @Ctx() ctx: Context,
    @Arg('role', () => ApiKeyRoleEnum) role: Role,
    @Arg('name', () => String, { nullable: true, description: 'A label (default: the role).' }) name?: string | null,
  ): Promise<CreatedApiKey> {
    if (name != null && name.trim() === '') throw badUserInput('name must not be empty (leave it out for the role as name)', 'name');
    const created = await createApiKey(ctx.db, { role, name: name ?? role });
    return { key: created.key, id: String(created.id), name: created.name, role: created.role, prefix: created.prefix };
  }

  @Authorized<Role>('admin')
  @Mutation(() => ApiKey, { description: 'Revokes a key at once (the next request with it is refused); revoking twice keeps the first time.' })
  async revokeApiKey(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<ApiKey> {
    const revoked = await revokeApiKey(ctx.db, String(parseId(id, 'id')));
    if (!revoked) throw notFound(`no API key with id ${id}`, 'id');
    return toApiKey(revoked);
  }
}

function toApiKey(k: ApiKeyListing): ApiKey {
  return { ...k, id: String(k.id) };
}
