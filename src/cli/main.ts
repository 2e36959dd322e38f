#!/usr/bin/env node
import 'reflect-metadata';
import { type Command, CommanderError } from 'commander';
import type { Config } from '../config';
import { messageOf } from '../errors';
import { buildProgram, type Action } from './program';

/** Runs `dhr` with these arguments (without node and the script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  let code = 0;
  // Settings are read here, at the edge, and only for a command that runs (not for --help, which
  // does not even load them: config.ts pulls in the encoders' and the logger's modules).
  const program = buildProgram(async (action: Action) => {
    const { loadConfig } = require('../config') as { loadConfig: () => Config };
    code = await action(loadConfig());
  });
  // Throw instead of exiting (every subcommand too: they copied the settings when made), so
  // help and usage errors come back here as exit codes.
  const throwing = (command: Command): void => {
    command.exitOverride();
    command.commands.forEach(throwing);
  };
  throwing(program);
  const [first] = argv;
  if (first !== undefined && !first.startsWith('-') && first !== 'help' && !program.commands.some((c) => c.name() === first)) {
    console.error(`unknown command "${first}"\n`);
    console.error(program.helpInformation());
    return 1;
  }
  if (first === undefined) {
    console.error(program.helpInformation());
    return 1;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    // --help and --version end here with exit code 0; usage errors were already printed.
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
  return code;
}

/** Runs `dhr` and exits the process with its code (bin/dhr.js, or this file run directly). */
export function runCli(argv: string[]): void {
  // `dhr --help | head -1`: the reader left, so the rest of the output has nowhere to go. That
  // ends the command quietly, as for any Unix tool, instead of an unhandled EPIPE with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(messageOf(error));
      process.exit(1);
    },
  );
}

if (require.main === module) runCli(process.argv.slice(2));
