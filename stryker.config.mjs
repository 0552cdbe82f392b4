// npm run test:mutation: Stryker mutates the service's code and runs the unit tests against each
// mutant; a mutant no test notices is a behaviour no test pins. A slow audit, not part of npm test.
// Each test file runs with plain node (the tap runner), and only the files that cover a mutant run
// against it. Reports: reports/mutation/ (gitignored). Mutants no test can kill: stryker.equivalents.md.
// `npm run test:mutation -- --mutate src/num.js` audits one file.
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
