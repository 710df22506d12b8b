/**
 * Reading the daemon's /metrics (Prometheus text exposition) in the benchmark: the child daemon's
 * counters are the only view of its router from outside the process.
 */
import { get } from "node:http";

/** One scrape: every sample line, keyed by its series as written (`name{label="v",...}`). */
export class MetricsSnapshot {
  constructor(private readonly series: ReadonlyMap<string, number>) {}

  static parse(text: string): MetricsSnapshot {
    const series = new Map<string, number>();
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const space = line.lastIndexOf(" ");
      const raw = line.slice(space + 1);
      const value = Number(raw);
      if (space <= 0 || (Number.isNaN(value) && raw.toLowerCase() !== "nan"))
        throw new Error(`not a Prometheus sample line: ${line}`);
      series.set(line.slice(0, space), value);
    }
    return new MetricsSnapshot(series);
  }

  /**
   * The sum over every series of `name` whose labels include all of `labels` (0 when there is
   * none: prom-client omits a labelled counter until it is first incremented).
   */
  sum(name: string, labels: Record<string, string> = {}): number {
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    let total = 0;
    for (const [key, value] of this.series) {
      const brace = key.indexOf("{");
      const seriesName = brace === -1 ? key : key.slice(0, brace);
      if (seriesName !== name) continue;
      if (wanted.every((pair) => key.includes(pair))) total += value;
    }
    return total;
  }
}

export function scrape(baseUrl: string): Promise<MetricsSnapshot> {
  return new Promise((resolve, reject) => {
    const req = get(`${baseUrl}/metrics`, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${baseUrl}/metrics answered ${res.statusCode}: ${body}`));
          return;
        }
        try {
          resolve(MetricsSnapshot.parse(body));
        } catch (error) {
          reject(error);
        }
      });
      res.on("error", reject);
    });
    req.on("error", reject);
  });
}
