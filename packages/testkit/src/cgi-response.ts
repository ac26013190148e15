/** Status line and headers a CGI program printed before its body. */
export interface CgiHead {
  status: number;
  statusMessage: string | undefined;
  headers: Array<[name: string, value: string]>;
}

/** CGI heads are a few hundred bytes; anything this large means the program is not speaking CGI. */
export const MAX_CGI_HEAD_BYTES = 64 * 1024;

/**
 * Finds the blank line that ends a CGI head in `buffer` and parses what is before it.
 * Returns undefined while the blank line has not arrived yet, so the caller can keep
 * buffering. git http-backend ends lines with CRLF; bare LF is accepted too, as CGI allows.
 */
export function parseCgiHead(buffer: Buffer): { head: CgiHead; bodyStart: number } | undefined {
  const end = headEnd(buffer);
  if (end === undefined) return undefined;
  const lines = buffer.subarray(0, end.headLength).toString('latin1').split(/\r?\n/);
  let status = 200;
  let statusMessage: string | undefined;
  const headers: Array<[string, string]> = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') {
      // "Status: 404 Not Found": the code, then an optional reason phrase.
      const match = /^(\d{3})\s*(.*)$/.exec(value);
      if (match?.[1]) {
        status = Number(match[1]);
        statusMessage = match[2] || undefined;
      }
    } else {
      headers.push([name, value]);
    }
  }
  return { head: { status, statusMessage, headers }, bodyStart: end.bodyStart };
}

function headEnd(buffer: Buffer): { headLength: number; bodyStart: number } | undefined {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return undefined;
  if (lf === -1 || (crlf !== -1 && crlf < lf)) return { headLength: crlf, bodyStart: crlf + 4 };
  return { headLength: lf, bodyStart: lf + 2 };
}
