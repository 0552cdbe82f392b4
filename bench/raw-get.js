// The open loop's GETs (open-client.js), written on keep-alive sockets and read with the least
// parsing an answer needs: its status, its length, Retry-After and, when asked, its body. The
// client shares the machine's cores with the server it measures, and every millisecond of CPU it
// spends is taken from that server's threads: sending 120 requests a second on the slower 2-CPU
// machine, it spent 940-990 µs of CPU a request with node:http's client and 510-570 with this
// (undici's Pool, 900-1,080), of which about 190 are the timer's wake-up before each send.
import net from 'node:net'
import { performance } from 'node:perf_hooks'

const HEAD_END = '\r\n\r\n'
// The HTTP/1.1 status line's code: "HTTP/1.1 200 OK".
const STATUS_AT = 9
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i
const RETRY_AFTER = /\r\nretry-after: *(\d+)/i
const CHUNKED = /\r\ntransfer-encoding: *chunked/i
const CONNECTION_CLOSE = /\r\nconnection: *close/i

// The body of an answer whose `head` ends at `bodyAt` in `text`, or undefined while it is still
// incomplete. Sized by Content-Length, or sent in chunks (node:http's own, when a server writes its
// head before the body, as the FIFO pool does); an answer sized by closing its connection would be
// read as status 0, so it is refused plainly instead.
export function bodyOf (head, text, bodyAt, path) {
  const declared = CONTENT_LENGTH.exec(head)
  if (declared !== null) {
    const end = bodyAt + Number(declared[1])
    return text.length < end ? undefined : text.slice(bodyAt, end)
  }
  if (!CHUNKED.test(head)) throw new Error(`an answer to GET ${path} has neither Content-Length nor chunks: the open loop's client reads only those`)
  let body = ''
  let at = bodyAt
  for (let line = text.indexOf('\r\n', at); line !== -1; line = text.indexOf('\r\n', at)) {
    const size = Number.parseInt(text.slice(at, line), 16)
    // The last chunk, of size 0, and the blank line after it (no trailers are sent here).
    if (size === 0) return text.length < line + 4 ? undefined : body
    const end = line + 2 + size
    if (text.length < end + 2) return undefined
    body += text.slice(line + 2, end)
    at = end + 2
  }
  return undefined
}

// Sockets to 127.0.0.1:`port`, one request on each at a time, opened as the requests in flight
// need them and kept for the next. A request not answered within `timeoutMs` closes its socket.
export class Connections {
  #port
  #timeoutMs
  #idle = []
  #open = new Set()

  constructor (port, timeoutMs) {
    this.#port = port
    this.#timeoutMs = timeoutMs
  }

  // GET `path`; resolves { status, ms, at, retryAfter } and, with `readBody`, the `body` of a 200
  // as a string. Status 0: no whole answer (the socket closed, failed or timed out first). `at`
  // is when it was sent (epoch ms), `ms` how long the answer took.
  get (path, readBody) {
    return new Promise((resolve) => {
      const socket = this.#idle.pop() ?? this.#connect()
      const started = performance.now()
      let text = ''
      let head
      let bodyAt
      const answer = (status, extra) => ({
        status,
        at: performance.timeOrigin + started,
        ms: performance.now() - started,
        retryAfter: Number(RETRY_AFTER.exec(head)?.[1]),
        ...extra
      })
      socket.job = {
        read: (chunk) => {
          text += chunk
          if (head === undefined) {
            const end = text.indexOf(HEAD_END)
            if (end === -1) return
            head = text.slice(0, end)
            bodyAt = end + HEAD_END.length
          }
          const body = bodyOf(head, text, bodyAt, path)
          if (body === undefined) return
          socket.job = undefined
          if (CONNECTION_CLOSE.test(head)) socket.destroy()
          else this.#idle.push(socket)
          const status = Number(head.slice(STATUS_AT, STATUS_AT + 3))
          resolve(answer(status, readBody && status === 200 ? { body } : undefined))
        },
        fail: () => resolve(answer(0))
      }
      socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)
    })
  }

  // Closes every socket; a request still waiting resolves with status 0.
  destroy () {
    for (const socket of this.#open) socket.destroy()
  }

  #connect () {
    const socket = net.connect({ host: '127.0.0.1', port: this.#port })
    socket.setNoDelay(true)
    socket.setEncoding('latin1')
    socket.setTimeout(this.#timeoutMs)
    // Bytes with no request waiting for them leave the socket's stream unreadable: it goes.
    socket.on('data', (chunk) => (socket.job === undefined ? socket.destroy() : socket.job.read(chunk)))
    socket.on('timeout', () => socket.job !== undefined && socket.destroy())
    socket.on('error', () => {})
    socket.on('close', () => {
      this.#open.delete(socket)
      const idle = this.#idle.indexOf(socket)
      if (idle !== -1) this.#idle.splice(idle, 1)
      const job = socket.job
      socket.job = undefined
      job?.fail()
    })
    this.#open.add(socket)
    return socket
  }
}
