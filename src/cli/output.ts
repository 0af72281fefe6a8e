import type { Writable } from "node:stream";

/**
 * Everything the CLI prints goes through here: human text (colours, a spinner) on a
 * terminal, JSON (one document, or JSON Lines for streams) when piped or with --json.
 * Errors and the spinner go to stderr, so stdout stays parseable.
 */

export interface OutputStream extends Pick<Writable, "write"> {
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface OutputOptions {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: Record<string, string | undefined>;
  /** true: --json, false: --human, undefined: JSON unless stdout is a terminal. */
  readonly json?: boolean;
  /** --no-color */
  readonly noColor?: boolean;
}

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  gray: [90, 39],
} as const;
export type Style = keyof typeof CODES;

const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_INTERVAL_MS = 80;

export class Output {
  /** Machine-readable output: JSON on stdout. */
  readonly json: boolean;
  readonly color: boolean;
  private readonly stdout: OutputStream;
  private readonly stderr: OutputStream;
  private spinnerText: string | undefined;
  private spinnerTimer: NodeJS.Timeout | undefined;
  private spinnerFrame = 0;
  private spinnerShown = false;
  /** The last human write to stdout left the cursor mid-line (streamed artifact text). */
  private midLine = false;

  constructor(options: OutputOptions) {
    this.stdout = options.stdout;
    this.stderr = options.stderr;
    this.json = options.json ?? !options.stdout.isTTY;
    // https://no-color.org: any non-empty NO_COLOR turns colours off.
    this.color = !this.json && Boolean(options.stdout.isTTY) && !options.noColor && !options.env.NO_COLOR && options.env.TERM !== "dumb";
  }

  /** Wraps text in an ANSI style when colours are on. */
  style(style: Style, text: string): string {
    if (!this.color) return text;
    const [on, off] = CODES[style];
    return `\x1b[${on}m${text}\x1b[${off}m`;
  }

  /** A JSON document (or one JSON Lines record) on stdout. */
  data(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Human lines on stdout (ignored in JSON mode, where `data` carries the result). */
  line(text = ""): void {
    if (this.json) return;
    this.withSpinnerHidden(() => {
      this.stdout.write(`${this.midLine ? "\n" : ""}${text}\n`);
      this.midLine = false;
    });
  }

  /** Human text without a newline: artifact chunks as they stream. */
  text(chunk: string): void {
    if (this.json || chunk === "") return;
    this.withSpinnerHidden(() => {
      this.stdout.write(chunk);
      this.midLine = !chunk.endsWith("\n");
    });
  }

  /** Ends a line left open by `text`. */
  endText(): void {
    if (!this.midLine) return;
    this.stdout.write("\n");
    this.midLine = false;
  }

  /** A note or warning for people, on stderr; never mixed into stdout's JSON. */
  note(text: string): void {
    this.withSpinnerHidden(() => this.stderr.write(`${text}\n`));
  }

  /** Starts (or relabels) the spinner; on stderr, only on a terminal in human mode. */
  spin(text: string): void {
    if (this.json || !this.stderr.isTTY) return;
    this.spinnerText = text;
    if (this.spinnerTimer) return;
    this.spinnerTimer = setInterval(() => this.drawSpinner(), SPINNER_INTERVAL_MS);
    this.spinnerTimer.unref();
    this.drawSpinner();
  }

  stopSpinner(): void {
    if (this.spinnerTimer) clearInterval(this.spinnerTimer);
    this.spinnerTimer = undefined;
    this.clearSpinner();
    this.spinnerText = undefined;
  }

  private drawSpinner(): void {
    if (this.spinnerText === undefined || this.midLine) return;
    const frame = SPINNER_FRAMES[this.spinnerFrame++ % SPINNER_FRAMES.length]!;
    this.stderr.write(`\r\x1b[K${this.style("cyan", frame)} ${this.spinnerText}`);
    this.spinnerShown = true;
  }

  private clearSpinner(): void {
    if (!this.spinnerShown) return;
    this.stderr.write("\r\x1b[K");
    this.spinnerShown = false;
  }

  private withSpinnerHidden(write: () => void): void {
    const shown = this.spinnerShown;
    this.clearSpinner();
    write();
    if (shown) this.drawSpinner();
  }
}
