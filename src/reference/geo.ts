import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Country, state and city as the lookup returns them. */
export interface Country {
  id: number;
  name: string;
  iso2: string;
  phonecode: string;
}
export interface State {
  id: number;
  name: string;
  country_id: number;
  iso2: string;
}
export interface City {
  id: number;
  name: string;
  state_id: number;
  country_id: number;
}

const DATA_DIR = join(dirname(createRequire(import.meta.url).resolve('@countrystatecity/countries')), 'data');

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

const COUNTRIES: Country[] = readJson<Array<Omit<Country, 'phonecode'> & { phonecode?: string | number | null }>>(
  join(DATA_DIR, 'countries.json'),
)
  .map((c) => ({ id: c.id, name: c.name, iso2: c.iso2, phonecode: String(c.phonecode ?? '') }))
  .sort((a, b) => a.id - b.id);
const BY_ID = new Map(COUNTRIES.map((c) => [c.id, c]));
const BY_TEXT = new Map<string, Country>();
for (const c of COUNTRIES) {
  BY_TEXT.set(c.name.toLowerCase(), c);
  BY_TEXT.set(c.iso2.toLowerCase(), c);
}

let statesAndCities: { states: State[]; cities: City[]; stateById: Map<number, State>; cityById: Map<number, City> } | null = null;

/** Reads every state and city once (about 150,000 cities), on first need. */
function loadStatesAndCities() {
  if (statesAndCities) return statesAndCities;
  const states: State[] = [];
  const cities: City[] = [];
  for (const countryDir of readdirSync(DATA_DIR, { withFileTypes: true })) {
    if (!countryDir.isDirectory()) continue;
    const base = join(DATA_DIR, countryDir.name);
    const statesFile = join(base, 'states.json');
    if (!existsSync(statesFile)) continue;
    for (const s of readJson<Array<Omit<State, 'iso2'> & { iso2?: string | null }>>(statesFile))
      states.push({ id: s.id, name: s.name, country_id: s.country_id, iso2: String(s.iso2 ?? '') });
    for (const stateDir of readdirSync(base, { withFileTypes: true })) {
      const citiesFile = join(base, stateDir.name, 'cities.json');
      if (!stateDir.isDirectory() || !existsSync(citiesFile)) continue;
      for (const c of readJson<City[]>(citiesFile)) cities.push({ id: c.id, name: c.name, state_id: c.state_id, country_id: c.country_id });
    }
  }
  states.sort((a, b) => a.id - b.id);
  cities.sort((a, b) => a.id - b.id);
  statesAndCities = { states, cities, stateById: new Map(states.map((s) => [s.id, s])), cityById: new Map(cities.map((c) => [c.id, c])) };
  return statesAndCities;
}

export function allCountries(): readonly Country[] {
  return COUNTRIES;
}
export function allStates(): readonly State[] {
  return loadStatesAndCities().states;
}
export function allCities(): readonly City[] {
  return loadStatesAndCities().cities;
}

export function countryById(id: number): Country | undefined {
  return BY_ID.get(id);
}

/** A country from an id, a name or an ISO-2 code (the CSV import accepts all three). */
export function findCountry(text: string): Country | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return BY_ID.get(Number(t));
  return BY_TEXT.get(t.toLowerCase());
}

export function stateById(id: number): State | undefined {
  return loadStatesAndCities().stateById.get(id);
}

export function cityById(id: number): City | undefined {
  return loadStatesAndCities().cityById.get(id);
}
