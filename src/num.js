// Parses the `num` query parameter strictly, before Ajv's coercion can guess at it.

// More digits than this is not a number anyone means: refused before any parsing.
export const MAX_NUM_LENGTH = 20

// The messages are built only for a refusal: a valid num costs no string.
const range = (max) => `an integer from 0 to ${max}`

// Returns { num } for a plain decimal integer from 0 to max, else { message } saying what was wrong.
export function parseNum (value, max) {
  if (value === undefined) return { message: `num is required: give ${range(max)}, e.g. /fib?num=${Math.min(30, max)}` }
  if (Array.isArray(value)) return { message: `num was given ${value.length} times: give it once` }
  if (value === '') return { message: `num is empty: give ${range(max)}` }
  if (value.length > MAX_NUM_LENGTH) return { message: `num is too long (${value.length} characters): give ${range(max)}` }
  if (!/^[0-9]+$/.test(value)) {
    if (/^-[0-9]+$/.test(value)) return { message: `num must not be negative, got ${value}: give ${range(max)}` }
    return { message: `num must be a plain decimal integer (digits only) from 0 to ${max}, got ${JSON.stringify(value)}` }
  }
  const num = Number(value)
  if (num > max) return { message: `num must be at most ${max}, got ${value}` }
  return { num }
}
