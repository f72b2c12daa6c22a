/**
 * The daily chart of the overview, drawn by uPlot. Loaded with a dynamic import only by the pages
 * that show a chart, so the first page's JavaScript stays small.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

/** Draws `series` over `days` (`YYYY-MM-DD`, UTC) into `target`; returns the chart, to destroy later. */
export function drawDailyChart(target: HTMLElement, days: string[], series: Series[]): uPlot {
  const xs = days.map((d) => Date.parse(d + 'T00:00:00Z') / 1000);
  const width = Math.max(280, target.clientWidth);
  return new uPlot(
    {
      width,
      height: 260,
      scales: { x: { time: true } },
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: false } }))],
      axes: [{}, { size: 50 }],
    },
    [xs, ...series.map((s) => s.values)],
    target,
  );
}
