// A team's S3-compatible object store, through the AWS SDK v3 S3 client and its multipart
// Upload (@aws-sdk/lib-storage): the most used S3 client, which signs every request (SigV4) and
// streams a large object in parts, a bounded number of them in memory at once. Loaded only when
// a store is used: `teaminfra mcp` and the capabilities never load it.
//
// Every connection is checked like a webhook's (src/webhooks/url-safety.ts): the endpoint as
// written, and each address DNS gives for it, refused when private unless the destination allows it.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { guardedLookup } from '../webhooks/url-safety.js';

export interface StoreAddress {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  allowPrivate: boolean;
}

/** Parts of 16 MiB, two in flight: at most 32 MiB of an upload in memory, whatever its size. */
export const PART_BYTES = 16 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

type Sdk = typeof import('@aws-sdk/client-s3');

export class ObjectStore {
  private constructor(private readonly sdk: Sdk, private readonly client: S3Client, readonly address: StoreAddress) {}

  static async open(address: StoreAddress): Promise<ObjectStore> {
    const sdk = await import('@aws-sdk/client-s3');
    const lookup = guardedLookup(address.allowPrivate) as never;
    const client = new sdk.S3Client({
      endpoint: address.endpoint, region: address.region, forcePathStyle: true,
      credentials: { accessKeyId: address.accessKeyId, secretAccessKey: address.secretAccessKey },
      // Checksums only where S3 requires them: many S3-compatible stores (Ceph before Reef, older
      // MinIO) refuse the SDK's newer default, aws-chunked bodies with checksum trailers. Each
      // part is still signed with its SHA-256, and the whole object is checked by us (upload-backup.ts).
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, lookup }), httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
        connectionTimeout: 10_000, requestTimeout: 120_000,
      },
    });
    return new ObjectStore(sdk, client, address);
  }

  /** Streams `body` into `key` as a multipart upload; resolves once the store completed it. */
  async put(key: string, body: Readable, signal?: AbortSignal): Promise<void> {
    const { Upload } = await import('@aws-sdk/lib-storage');
    const abortController = new AbortController();
    const upload = new Upload({
      client: this.client, params: { Bucket: this.address.bucket, Key: key, Body: body, ContentType: 'application/octet-stream' },
      partSize: PART_BYTES, queueSize: PARTS_IN_FLIGHT, leavePartsOnError: false, abortController,
    });
    const abort = () => abortController.abort();
    signal?.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  /** The object's size, or null when there is none. */
  async sizeOf(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.address.bucket, Key: key }));
      return head.ContentLength ?? null;
    } catch (error) {
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
      throw error;
    }
  }

  async read(key: string, signal?: AbortSignal): Promise<Readable> {
    const got = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.address.bucket, Key: key }), { abortSignal: signal });
    return got.Body as Readable;
  }

  async write(key: string, body: Buffer): Promise<void> {
    await this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.address.bucket, Key: key, Body: body }));
  }

  /** Deletes the object; one already gone is no error. */
  async remove(key: string): Promise<void> {
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.address.bucket, Key: key }));
  }

  /** Ends the multipart uploads of `key` an earlier attempt left unfinished (a process killed mid-upload), so no part stays billed. */
  async abandonUnfinished(key: string): Promise<void> {
    const listed = await this.client.send(new this.sdk.ListMultipartUploadsCommand({ Bucket: this.address.bucket, Prefix: key }));
    for (const upload of listed.Uploads ?? []) {
      if (upload.Key !== key || !upload.UploadId) continue;
      await this.client.send(new this.sdk.AbortMultipartUploadCommand({ Bucket: this.address.bucket, Key: key, UploadId: upload.UploadId }));
    }
  }

  close(): void {
    this.client.destroy();
  }
}
