import neostandard from 'neostandard'

export default [
  ...neostandard({ ignores: ['coverage/**', '.tap/**', '.stryker-tmp/**', 'reports/**', 'bench/out/**'] }),
  // k6 scripts run in k6's JavaScript runtime, which provides these.
  { files: ['k6/**/*.js', 'bench/k6/**/*.js'], languageOptions: { globals: { __ENV: 'readonly', __VU: 'readonly', __ITER: 'readonly' } } },
  // V8 makes a function written straight into a property in the old space, where a function made
  // for each request keeps that request's objects past every scavenge (src/pool/task-records.js).
  {
    files: ['src/**/*.js', 'workers/**/*.js'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: 'AssignmentExpression[left.type="MemberExpression"] > :matches(ArrowFunctionExpression, FunctionExpression).right',
        message: 'Name the function with a const first: V8 makes a function written straight into a property in the old space (src/pool/task-records.js).'
      }]
    }
  }
]
