import neostandard from 'neostandard'

export default [
  ...neostandard({ ignores: ['coverage/**', '.tap/**', '.stryker-tmp/**', 'reports/**', 'bench/out/**'] }),
  // k6 scripts run in k6's JavaScript runtime, which provides these.
  { files: ['k6/**/*.js', 'bench/k6/**/*.js'], languageOptions: { globals: { __ENV: 'readonly', __VU: 'readonly', __ITER: 'readonly' } } }
]
