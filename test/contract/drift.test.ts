/**
 * The project's CFS contract document against the published CFS OpenAPI document, where that is at hand
 * (CFS_OPENAPI_SPEC, or ../shared/reference/cfs-openapi.yaml beside the clone, outside the repository): every path, parameter and schema
 * field declared here exists there with the same type, enum and limits. Elsewhere it is skipped and listed at the
 * end of the run; under CI it must run.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { describeWith } from '../helpers/requires';
import { contractDrift, schemaDrift, type OpenApi } from './drift';
import { CONTRACT_SPEC, publishedSpecPath } from './spec';

const published = publishedSpecPath();
const load = async (file: string) => (await SwaggerParser.dereference(file)) as unknown as OpenApi;

describeWith(
  {
    what: 'the published CFS spec',
    missing: published ? undefined : 'the published CFS OpenAPI document is not here',
    enable: 'set CFS_OPENAPI_SPEC=<cfs-openapi.yaml>, or put it at ../shared/reference/cfs-openapi.yaml',
  },
  'the contract document agrees with the published CFS spec',
  () => {
    let ours: OpenApi;
    let theirs: OpenApi;
    beforeAll(async () => {
      [ours, theirs] = await Promise.all([load(CONTRACT_SPEC), load(published!)]);
    });

    it('declares nothing the published document lacks or types differently', () => {
      expect(contractDrift(ours, theirs)).toEqual([]);
    });

    it('would see a change in the published document (the comparison can fail)', () => {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a dereferenced document, edited field by field
      const changed: { paths: Record<string, any> } = structuredClone(theirs);
      const get = changed.paths['/v3/components']!.get;
      get.parameters = get.parameters.filter((p: { name: string }) => p.name !== 'ids');
      const status = get.parameters.find((p: { name: string }) => p.name === 'status');
      status.schema = { ...status.schema, enum: ['pending', 'configured'] };
      const component = get.responses['200'].content['application/json'].schema.properties.components.items;
      component.properties = { ...component.properties, new_field: { type: 'string' } };
      delete changed.paths['/v3/sessions/{session_name}']!.delete;
      expect(contractDrift(ours, changed)).toEqual(
        expect.arrayContaining([
          'GET /v3/components parameter query:ids: not in the published document',
          expect.stringMatching(/^GET \/v3\/components parameter query:status: enum is/),
          'GET /v3/components response 200 application/json.components[].new_field: published, but refused here (additionalProperties)',
          'DELETE /v3/sessions/{session_name}: no such operation in the published document',
        ]),
      );
    });
  },
);

describe('schemaDrift', () => {
  it('compares type, enum (in any order), limits, required and nested properties', () => {
    const ours = {
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string', enum: ['x', 'y'] }, b: { type: 'integer', minimum: 1 } },
    };
    expect(schemaDrift(ours, structuredClone(ours), 'S')).toEqual([]);
    expect(
      schemaDrift(ours, { ...ours, properties: { ...ours.properties, a: { type: 'string', enum: ['y', 'x'] } } }, 'S'),
    ).toEqual([]);
    expect(schemaDrift(ours, { type: 'object', required: [], properties: { a: { type: 'integer' } } }, 'S')).toEqual([
      'S: required is [] there, ["a"] here',
      'S.a: type is "integer" there, "string" here',
      'S.a: enum is nothing there, ["x","y"] here',
      'S.b: not in the published document',
    ]);
  });
});
