import { Field, ID, ObjectType } from 'type-graphql';
import { ROLES, type Role } from '../../store/keys';
import { graphqlEnum } from './enums';

export const ApiKeyRoleEnum = graphqlEnum(ROLES, {
  name: 'ApiKeyRole',
  description: 'admin: every operation; reader: queries only (matters when READ_ACCESS=key).',
});

/** What names a key: shared by the listed key and the new one (its own type in the schema only if a field returned it). */
@ObjectType()
abstract class KeyIdentity {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => ApiKeyRoleEnum)
  role!: Role;
}

@ObjectType({ description: 'An API key as listed: never the key itself, nor its hash.' })
export class ApiKey extends KeyIdentity {
  @Field(() => String, { description: 'The first characters of the key, to tell keys apart.' })
  prefix!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true, description: 'Refreshed at most once a minute.' })
  lastUsedAt!: Date | null;

  @Field(() => Date, { nullable: true, description: 'Null while the key works.' })
  revokedAt!: Date | null;
}

@ObjectType({ description: 'A new API key: the only time the key is shown.' })
export class CreatedApiKey extends KeyIdentity {
  @Field(() => String, { description: 'The key, for "Authorization: Bearer <key>". Not stored: keep it now.' })
  key!: string;

  @Field(() => String)
  prefix!: string;
}
