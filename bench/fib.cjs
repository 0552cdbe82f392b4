// The fastest form of the service's computation, independent of its code: the same naive fib in
// a CommonJS file, as a named function expression. The reference of bench/parity.js and the
// compute limit of the open loop (bench/open.js).
const fib = function fib (n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2)
}

module.exports = fib
