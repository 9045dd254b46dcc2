// The part of @20minutes/s3rver (which ships no types) that test/helpers/s3.ts uses.
declare module '@20minutes/s3rver' {
  export default class S3rver {
    constructor(opts: { silent?: boolean; directory: string; configureBuckets?: Array<{ name: string }> });
    configureBuckets(): Promise<void>;
    getMiddleware(): unknown;
    store: {
      listObjects(bucket: string, opts: { prefix?: string }): Promise<unknown>;
      deleteObject(bucket: string, key: string): Promise<void>;
    };
  }
}
