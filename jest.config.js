/** Jest runs the TypeScript sources as ES modules; type-checking is `npm run typecheck`. */
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  // "a2a-grpc-server": agent modules (README example, examples/) import the package; tests run its sources.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1", "^a2a-grpc-server$": "<rootDir>/src/index.ts" },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true, diagnostics: false }],
  },
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  testTimeout: 30000,
  // Most suites wait on sockets, child processes and PostgreSQL rather than compute: two workers
  // halve the run on a 2-core machine (Jest's default there is one, cores - 1).
  maxWorkers: 2,
  // One throwaway PostgreSQL for the run (each suite makes its own database on it).
  globalSetup: "<rootDir>/test/support/postgres/throwaway-postgres.ts",
  globalTeardown: "<rootDir>/test/support/postgres/global-teardown.ts",
};
