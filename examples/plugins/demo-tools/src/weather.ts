/**
 * `demo_weather`: a FAKE forecast. Nothing is fetched; the numbers are derived from the city's
 * name, so the same city always gets the same forecast. Every answer says so, because a model
 * that reads "Lisbon: 19 °C" will otherwise repeat it as fact.
 *
 * It also demonstrates -33404 (ToolUnavailableError): the pretend service accepts a limited
 * number of calls per minute and answers the rest with `retry_after_ms`.
 */
import { type ToolDef, ToolUnavailableError, textResult } from "nexo-plugin-sdk";
import { ArgumentReader } from "./args.js";
import { hashText, randomInt, seededRandom } from "./random.js";
import type { CallWindow } from "./rate-limit.js";

export const DEMO_LABEL = "DEMO DATA: generated from the city name, not a real forecast";

const UNITS = ["metric", "imperial"] as const;
type Units = (typeof UNITS)[number];

/** Each condition with its plausible chance of rain, in tens of percent, so "sunny, rain 100%" cannot happen. */
const CONDITIONS: ReadonlyArray<{ name: string; rainTens: [number, number] }> = [
  { name: "sunny", rainTens: [0, 1] },
  { name: "partly cloudy", rainTens: [0, 2] },
  { name: "cloudy", rainTens: [1, 4] },
  { name: "light rain", rainTens: [6, 9] },
  { name: "showers", rainTens: [5, 8] },
  { name: "windy", rainTens: [0, 3] },
  { name: "foggy", rainTens: [0, 2] },
];

export const weatherTool: ToolDef = {
  name: "demo_weather",
  description:
    "Demo only: a made-up, deterministic weather forecast for a city (no network, not real data). " +
    "Useful to try tool calls; never present its output as a real forecast.",
  inputSchema: {
    type: "object",
    properties: {
      city: { type: "string", minLength: 1, maxLength: 80, description: "City name, e.g. Lisbon" },
      days: { type: "integer", minimum: 1, maximum: 7, default: 1, description: "Days to forecast" },
      units: { type: "string", enum: [...UNITS], default: "metric" },
    },
    required: ["city"],
    additionalProperties: false,
  },
};

export interface DayForecast {
  day: number;
  condition: string;
  low: number;
  high: number;
  windSpeed: number;
  rainChancePercent: number;
}

/** The forecast for `city`, a pure function of its (case-insensitive) name and the day index. */
export function fakeForecast(city: string, days: number, units: Units): DayForecast[] {
  const base = hashText(city.trim().toLowerCase());
  return Array.from({ length: days }, (_, index) => {
    const random = seededRandom(base + index);
    const lowC = randomInt(random, -5, 22);
    const highC = lowC + randomInt(random, 3, 12);
    const windKmh = randomInt(random, 0, 60);
    const condition = CONDITIONS[randomInt(random, 0, CONDITIONS.length - 1)]!;
    const day: DayForecast = {
      day: index + 1,
      condition: condition.name,
      low: lowC,
      high: highC,
      windSpeed: windKmh,
      rainChancePercent: randomInt(random, ...condition.rainTens) * 10,
    };
    if (units === "imperial") {
      day.low = Math.round((lowC * 9) / 5 + 32);
      day.high = Math.round((highC * 9) / 5 + 32);
      day.windSpeed = Math.round(windKmh * 0.621371);
    }
    return day;
  });
}

export function describeForecast(city: string, forecast: DayForecast[], units: Units): string {
  const temp = units === "metric" ? "°C" : "°F";
  const speed = units === "metric" ? "km/h" : "mph";
  const lines = forecast.map(
    (d) =>
      `Day ${d.day}: ${d.condition}, ${d.low} to ${d.high} ${temp}, wind ${d.windSpeed} ${speed}, ` +
      `rain ${d.rainChancePercent}%`,
  );
  return [`Forecast for ${city} (${DEMO_LABEL}):`, ...lines].join("\n");
}

export function runWeather(args: unknown, window: CallWindow, now = Date.now()) {
  const reader = new ArgumentReader("demo_weather", args, ["city", "days", "units"]);
  const city = reader.string("city", { maxLength: 80 });
  const days = reader.integer("days", { min: 1, max: 7, fallback: 1 });
  const units = reader.choice("units", UNITS, "metric");
  reader.finish();

  // Checked after the arguments: a malformed call should learn what is wrong with it, and not be
  // counted against the caller's budget.
  const retryAfterMs = window.tryCall(now);
  if (retryAfterMs > 0) {
    throw new ToolUnavailableError(
      `the demo weather service allows ${window.limit} calls per minute; try again later`,
      retryAfterMs,
    );
  }
  return textResult(describeForecast(city, fakeForecast(city, days, units), units));
}
