import neostandard from 'neostandard'

export default neostandard({ ignores: ['coverage/**', '.tap/**'] })
