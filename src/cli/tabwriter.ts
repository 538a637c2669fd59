/**
 * Column alignment as Go's text/tabwriter does it (minwidth 0, padding 2, space padding, left-aligned), so that
 * `describe` output lines up exactly like Velero's. A cell is text terminated by a tab; the text after the last tab
 * of a line is not a cell and is never padded. A column's width is set per block of consecutive lines that have a
 * cell in that column; blank lines end every block.
 */
interface Line {
  cells: string[];
}

export function tabwrite(text: string, opts: { minwidth?: number; padding?: number } = {}): string {
  const minwidth = opts.minwidth ?? 0;
  const padding = opts.padding ?? 2;
  const lines: Line[] = text.split('\n').map((l) => ({ cells: l.split('\t') }));
  const out: string[] = [];
  const widths: number[] = [];

  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = (lines[i] as Line).cells;
      let s = '';
      cells.forEach((c, j) => {
        s += c;
        if (j < widths.length && j < cells.length - 1) s += ' '.repeat(Math.max(0, (widths[j] as number) - c.length));
      });
      out.push(s);
    }
  };

  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= (lines[t] as Line).cells.length - 1) continue;
      writeLines(line0, t);
      line0 = t;
      let width = minwidth;
      for (; t < line1; t++) {
        const cells = (lines[t] as Line).cells;
        if (column >= cells.length - 1) break;
        width = Math.max(width, (cells[column] as string).length + padding);
      }
      widths.push(width);
      format(line0, t);
      widths.pop();
      line0 = t;
      t--; // the for-loop's increment would skip line t
    }
    writeLines(line0, line1);
  };

  format(0, lines.length);
  return out.join('\n');
}
