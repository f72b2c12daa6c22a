import { constants } from 'node:zlib';
import etag from '@fastify/etag';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { Int, MAX_ID, NotModified, responses, Success } from '../../http/schemas.js';
import { allCities, allCountries, allStates } from '../../reference/geo.js';

const GeoQuery = Type.Object({
  country_id: Type.Optional(Int({ minimum: 1, maximum: MAX_ID, description: 'Only the states and cities of this country.' })),
  state_id: Type.Optional(Int({ minimum: 1, maximum: MAX_ID, description: 'Only the cities of this state.' })),
});

const Country = Type.Object({ id: Type.Integer(), name: Type.String(), iso2: Type.String(), phonecode: Type.String() });
const State = Type.Object({ id: Type.Integer(), name: Type.String(), country_id: Type.Integer(), iso2: Type.String() });
const City = Type.Object({ id: Type.Integer(), name: Type.String(), state_id: Type.Integer(), country_id: Type.Integer() });
const Lookup = Success(
  Type.Object({ countries: Type.Array(Country), states: Type.Array(State), cities: Type.Array(City) }),
  'Every country; the states and cities, narrowed by the query. Ascending ids.',
);

let fullBody: Buffer | null = null;

/**
 * The unfiltered lookup (~10 MB of JSON, ~150,000 cities), serialised once and kept: the data never
 * changes at run time, and serialising it per request costs more than sending it.
 */
function fullLookup(): Buffer {
  fullBody ??= Buffer.from(JSON.stringify(ok({ countries: allCountries(), states: allStates(), cities: allCities() })));
  return fullBody;
}

/** `/get/country-state-city`: full arrays, or states and cities narrowed by `country_id`/`state_id`. */
export const geoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // A weak tag: the same data may leave gzip- or br-encoded (by the compress plugin) or not.
  await app.register(etag, { weak: true });

  const schema = {
    summary: 'Countries, states and cities',
    description: 'Cacheable: answers carry an `ETag`; send it back in `If-None-Match` for a 304.',
    querystring: GeoQuery,
    response: { ...responses(Lookup, 422), 304: NotModified },
  };
  // The fastest levels: the full lookup is ~10 MB compressed per request, and at these levels it
  // stays within ~25% of the default levels' size (measured, docs/api-notes.md).
  const compress = { zlibOptions: { level: 1 }, brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } } };
  app.get('/get/country-state-city', { config: { scope: 'none' }, schema, compress }, async (req, reply) => {
    reply.header('Cache-Control', 'private, max-age=86400').header('Vary', 'Accept-Encoding');
    const { country_id: countryId, state_id: stateId } = req.query;
    if (countryId === undefined && stateId === undefined) return reply.type('application/json; charset=utf-8').send(fullLookup());
    const states = countryId ? allStates().filter((s) => s.country_id === countryId) : allStates();
    const cities = allCities().filter((c) => (!countryId || c.country_id === countryId) && (!stateId || c.state_id === stateId));
    return ok({ countries: [...allCountries()], states, cities });
  });
};
