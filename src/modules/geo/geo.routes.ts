import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { allCities, allCountries, allStates } from './geo.data.js';

const GeoQuery = Type.Object({
  country_id: Type.Optional(Type.Integer({ minimum: 1 })),
  state_id: Type.Optional(Type.Integer({ minimum: 1 })),
});

interface Cached {
  body: string;
  etag: string;
}

const MAX_CACHED = 512;
const cache = new Map<string, Cached>();

/** The lookup's envelope for a filter, serialised once and kept (the data never changes at run time). */
function lookup(countryId?: number, stateId?: number): Cached {
  const key = `${countryId ?? ''}:${stateId ?? ''}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const states = countryId ? allStates().filter((s) => s.country_id === countryId) : allStates();
  const cities = allCities().filter((c) => (!countryId || c.country_id === countryId) && (!stateId || c.state_id === stateId));
  const body = JSON.stringify({ status: 'success', message: { countries: allCountries(), states, cities } });
  const entry = { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(key, entry);
  return entry;
}

/** `/get/country-state-city` (contract §15): full arrays, or narrowed by `country_id`/`state_id`. */
export const geoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/get/country-state-city', { schema: { querystring: GeoQuery } }, async (req, reply) => {
    const { body, etag } = lookup(req.query.country_id, req.query.state_id);
    reply.header('ETag', etag).header('Cache-Control', 'private, max-age=86400');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  });
};
