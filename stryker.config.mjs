// The base settings of `npm run test:mutation` (test/mutation.js), which runs Stryker once per
// source file, with the test files planned for that file in place of `tap.testFiles` below.
// Each test file runs with plain node (the tap runner); a mutant no test notices is a behaviour no
// test pins. Reports: reports/mutation/ (gitignored). Mutants no test can kill: stryker.equivalents.md.
// `npx stryker run` alone runs every test file that covers a mutant against it: far slower, since
// every app a test builds loads config.js and cpus.js.
export default {
  testRunner: 'tap',
  tap: { testFiles: ['test/*.test.js', 'test/pool/*.test.js', 'test/routes/*.test.js', 'test/workers/*.test.js'] },
  // server.js runs only in the system tests' child processes, where Stryker cannot see coverage.
  mutate: ['src/**/*.js', '!src/server.js', 'workers/**/*.js'],
  coverageAnalysis: 'perTest',
  // The tests mostly wait (for threads, deadlines, pressure samples): more runs than cores pay.
  concurrency: 3,
  timeoutMS: 20000,
  ignorePatterns: ['.tools', '.tap', 'coverage', 'bench/out', 'reports', '.ci'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' }
}
