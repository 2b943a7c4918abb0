// One line that says what the command is waiting for. On a terminal it is rewritten in place as
// time passes; in a log or a pipe each new state gets its own line, so nothing floods the output.
export class ProgressLine {
  private lastKey: string | undefined;
  private written = false;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  /** `key` is what changes the line in a log (the state); `text` is the whole line. */
  update(key: string, text: string): void {
    if (this.stream.isTTY) {
      this.stream.write(`\r\x1b[2K${text}`);
      this.written = true;
    } else if (key !== this.lastKey) {
      this.stream.write(`${text}\n`);
    }
    this.lastKey = key;
  }

  /** Ends the line on a terminal, so what follows starts on a fresh one. */
  end(): void {
    if (this.stream.isTTY && this.written) this.stream.write('\n');
    this.written = false;
  }
}

export function elapsedSince(startMs: number): string {
  const seconds = Math.floor((Date.now() - startMs) / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}
