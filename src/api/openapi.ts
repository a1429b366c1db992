// The routes' zod schemas as request validators and as the API's OpenAPI 3.1 document, served
// at /openapi.json with human-readable docs at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';

/** Response headers the contract promises, by status code (added to every operation that has it). */
const RESPONSE_HEADERS: Record<string, Record<string, OpenAPIV3_1.HeaderObject>> = {
  '201': {
    'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same key', schema: { type: 'string', enum: ['true'] } },
    Location: { description: 'The order’s URL (first answers of POST /v1/orders)', schema: { type: 'string' } },
  },
  '202': {
    Location: { description: 'The order’s URL', schema: { type: 'string' } },
    'Retry-After': { description: 'Seconds after which the same request may be sent again', schema: { type: 'integer' } },
  },
  '409': { 'Retry-After': { description: 'Seconds until the key’s lease ends (idempotency_key_in_use)', schema: { type: 'integer' } } },
  '429': { 'Retry-After': { description: 'Seconds until the tenant’s rate limit lets requests through', schema: { type: 'integer' } } },
  '503': { 'Retry-After': { description: 'Seconds to wait before retrying with the same Idempotency-Key', schema: { type: 'integer' } } },
};

/**
 * Makes the zod schemas on each route both the request validators and the OpenAPI 3.1 document:
 * fastify-type-provider-zod compiles them, @fastify/swagger collects them, the document is served
 * at GET /openapi.json and human-readable docs at GET /docs. Register before any route.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Order payments API',
        version: '1.0.0',
        description:
          'Orders paid by a hold on the card, captured last, on a Temporal saga. Every POST is idempotent by tenant and ' +
          'Idempotency-Key; see the README for the contract.',
      },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from `npm run api -- keys create --tenant <id>`' } } },
    },
    transform: jsonSchemaTransform,
    transformObject: (documentObject) => withResponseHeaders(jsonSchemaTransformObject(documentObject) as OpenAPIV3_1.Document),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}

function withResponseHeaders(document: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  for (const path of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(path ?? {})) {
      if (typeof operation !== 'object' || !('responses' in operation)) continue;
      for (const [status, response] of Object.entries((operation as OpenAPIV3_1.OperationObject).responses ?? {})) {
        const headers = RESPONSE_HEADERS[status];
        if (headers && !('$ref' in response)) response.headers = { ...response.headers, ...headers };
      }
    }
  }
  return document;
}
