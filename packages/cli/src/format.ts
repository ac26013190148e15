/** Human-readable size: 512 B, 1.5 KiB, 12.0 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Shortens a 64-hex SHA-256 (bare or `sha256:`-prefixed) to its first 12 digits, as git
 * abbreviates commits; anything else is returned whole. Human output only: --json is full.
 */
export function shortHash(value: string): string {
  const match = /^(sha256:)?([0-9a-f]{64})$/.exec(value);
  return match ? `${match[1] ?? ''}${match[2]!.slice(0, 12)}` : value;
}

/** Rows padded so every column lines up; the last column is not padded. */
export function alignColumns(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
