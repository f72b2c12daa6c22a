/**
 * A send's hourly timeline drawn by uPlot (delivered, opens, clicks per UTC hour). Loaded with a
 * dynamic import by the report page only, so no other page carries the chart library.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Stats } from './types';

/** Draws `timeline` into `target`; returns the chart, to destroy later. */
export function drawHourlyChart(target: HTMLElement, timeline: Stats['timeline']): uPlot {
  const xs = timeline.map((h) => Date.parse(h.hour.replace(' ', 'T') + 'Z') / 1000);
  return new uPlot(
    {
      width: Math.max(280, target.clientWidth),
      // The hours are UTC, and so is the axis (uPlot would show the browser's zone).
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      height: 240,
      scales: {
        // An hour of margin on each side, so a send whose events fit in one hour still has a readable axis.
        // Taken from the hours themselves: with one point, uPlot's own range spans years.
        x: { time: true, range: () => [xs[0] - 3600, xs[xs.length - 1] + 3600] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      series: [
        {},
        { label: 'Delivered', stroke: '#246', width: 2 },
        { label: 'Opens', stroke: '#2a7d4f', width: 2 },
        { label: 'Clicks', stroke: '#b35900', width: 2 },
      ],
      axes: [{}, { size: 50 }],
    },
    [xs, timeline.map((h) => h.delivered), timeline.map((h) => h.opens), timeline.map((h) => h.clicks)],
    target,
  );
}
