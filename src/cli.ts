import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';
import { createDb } from './db/index.js';
import { migrateToLatest } from './db/migrate.js';
import { createAccountWithOwner, rotateAccountKeys } from './modules/accounts/accounts.service.js';
import { isEmail } from './util/email.js';

/** `accounts:create --name X [--owner-email E]`, `accounts:rotate --user-id N`, `migrate` (run as `node dist/cli.js …` by the npm scripts). Honours DATABASE_URL. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, 'user-id': { type: 'string' }, 'owner-email': { type: 'string' } },
    strict: true,
  });
  // Usage is checked before the database is opened, so a typo never creates or migrates one.
  const name = values.name?.trim();
  const id = /^\d{1,10}$/.test(values['user-id'] ?? '') ? Number(values['user-id']) : 0;
  const ownerEmail = values['owner-email']?.trim() ?? null;
  if (command === 'accounts:create' && !name) return fail('accounts:create needs --name "Account name"');
  if (ownerEmail !== null && (command !== 'accounts:create' || !isEmail(ownerEmail)))
    return fail('--owner-email takes the email address of the account owner, with accounts:create');
  if (command === 'accounts:rotate' && !(id >= 1 && id <= 2_147_483_647)) return fail('accounts:rotate needs --user-id N');
  if (!['migrate', 'accounts:create', 'accounts:rotate'].includes(command)) {
    return fail(
      'usage: accounts:create --name X [--owner-email E] | accounts:rotate --user-id N | migrate (npm run <command> -- <options>)',
    );
  }
  const config = loadConfig();
  const database = createDb(config.databaseUrl);
  try {
    await migrateToLatest(database.db, { appSecret: config.appSecret });
    if (command === 'accounts:create') {
      // With --owner-email, `owner_link` is the one-time link where the owner sets a name and password.
      console.log(JSON.stringify(await createAccountWithOwner(database.db, config, name!, ownerEmail)));
    } else if (command === 'accounts:rotate') {
      const keys = await rotateAccountKeys(database.db, id);
      if (!keys) return fail(`no account with id ${id}`);
      console.log(JSON.stringify(keys));
    } else {
      console.log(JSON.stringify({ migrated: true }));
    }
    return 0;
  } finally {
    await database.close();
  }
}

function fail(message: string): number {
  console.error(message);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
