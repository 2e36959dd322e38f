import { Field, ID, InterfaceType } from 'type-graphql';

/**
 * Relay's Node: anything a client can fetch again by its global id alone (node, nodes). The
 * implementing types resolve `id` to the global id and keep the integer as `databaseId`.
 */
@InterfaceType({ description: 'An object with a global id; node(id) and nodes(ids) fetch it again.' })
export abstract class Node {
  @Field(() => ID, { description: 'Global id: opaque and type-tagged. Id arguments also accept the integer databaseId.' })
  id!: string;
}
