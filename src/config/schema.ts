// The configuration schema. Every key of config/default.yaml is declared here, strictly: an unknown key or a
// wrong type is an error that names the key (see load.ts for how the file is named too).
import { z } from 'zod';
import { parseImageStore } from '../util/store-url.js';

const int = () => z.number().int();
const pos = () => z.number().int().positive();
const nonneg = () => z.number().nonnegative();
const cronExpr = z.string().min(9, 'expected a cron expression such as "*/30 * * * *"');
const level = z.enum(['error', 'warn', 'info', 'debug']);

export const configSchema = z
  .object({
    log: z.object({ level }).strict(),
    database: z
      .object({
        url: z.string().refine((u) => u === '' || /^postgres(ql)?:\/\//.test(u), 'expected empty (SQLite) or a postgres:// URL'),
      })
      .strict(),
    worker: z
      .object({
        stages: z.array(z.enum(['crawl', 'features', 'match', 'pair'])).min(1),
        concurrency: pos(),
        leaseSeconds: z.number().positive(),
        pollSeconds: z.number().positive(),
        bankWaitSeconds: z.number().positive(),
        batch: z.object({ features: pos(), match: pos(), pair: pos() }).strict(),
      })
      .strict(),
    import: z.object({ batchSize: pos(), maxImageBytes: pos(), maxManifestBytes: pos(), maxLineBytes: pos(), minImageSide: pos() }).strict(),
    images: z
      .object({
        store: z.string().refine((v) => !('error' in parseImageStore(v)), { error: (i) => (parseImageStore(String(i.input)) as { error: string }).error }),
        s3: z
          .object({
            bucket: z.string(),
            prefix: z.string(),
            endpoint: z.string().refine((v) => v === '' || URL.canParse(v), 'expected empty (AWS S3) or a URL such as http://127.0.0.1:9000'),
            region: z.string(),
            forcePathStyle: z.boolean(),
            requestChecksumCalculation: z.enum(['WHEN_REQUIRED', 'WHEN_SUPPORTED']),
            responseChecksumValidation: z.enum(['WHEN_REQUIRED', 'WHEN_SUPPORTED']),
            maxAttempts: pos(),
            timeoutMs: pos(),
          })
          .strict(),
      })
      .strict()
      .refine((v) => v.store !== 's3' || v.s3.bucket !== '', { error: 'images.store is s3 but images.s3.bucket is empty', path: ['s3', 'bucket'] }),
    captions: z
      .object({
        checkLanguage: z.boolean(),
        minLengthForDetection: int().min(0),
        sourceLanguages: z.array(z.string().length(3)).min(1),
        targetLanguages: z.array(z.string().length(3)).min(1),
      })
      .strict(),
    sift: z
      .object({
        maxSide: pos(),
        maxPixels: pos(),
        minSide: int().min(2),
        maxKeypoints: pos(),
        upsample: z.boolean(),
        octaveLayers: pos(),
        sigma: z.number().positive(),
        contrastThreshold: z.number().positive(),
        edgeThreshold: z.number().positive(),
        threads: int().min(0),
        twins: z
          .object({
            enabled: z.boolean(),
            maxDistance: int().min(0).max(7),
            minCorrelation: z.number().min(-1).max(1),
            maxAspectDiff: nonneg(),
            maxShift: nonneg(),
          })
          .strict(),
      })
      .strict(),
    lsh: z
      .object({
        bits: z.union([z.literal('auto'), pos().max(24)]),
        multiprobe: pos().max(256),
        shortlist: pos(),
        maxBucket: pos(),
        seed: int(),
        voteHamming: int().min(0).max(64),
        voteSigma: nonneg(),
        matchHamming: int().min(0).max(64),
        confidentScore: z.number().min(0).max(1),
        recollide: int().min(0),
        recollideHamming: int().min(0).max(64),
        recollideVoters: int().min(0),
        reprobe: int().min(0),
        window: nonneg(),
        farDistance: z.number().positive(),
        mirror: z.boolean(),
        mirrorShortlist: pos(),
        featureCacheMB: nonneg(),
        shards: int().min(0),
        memoryMB: nonneg(),
      })
      .strict(),
    match: z
      .object({
        ratio: z.number().gt(0).lte(1),
        ransacThreshold: z.number().positive(),
        ransacIterations: pos(),
        minInliers: int().min(0),
        minScore: nonneg(),
        top: pos(),
        views: z
          .object({
            enabled: z.boolean(),
            tilts: z.array(z.number().gt(1).lte(16)).max(8),
            rotations: pos().max(32),
            keypointsPerView: pos(),
            confidence: nonneg(),
            maxSide: pos(),
            minEvidence: int().min(0),
            minVotingKeypoints: nonneg(),
            budget: z.number().min(0).max(1),
            denseKeypoints: int().min(0).max(8192),
            denseBudget: z.number().min(0).max(1),
            recollide: int().min(0),
            targetViews: int().min(0),
            poolRadius: z.number().min(0),
            archive: z
              .object({
                candidates: int().min(0).max(200),
                preselect: int().min(0).max(200),
                budget: z.number().min(0).max(1),
                maxTilt: int().min(0).max(7),
                keypointsPerView: pos().max(8192),
                targetMaxTilt: int().min(0).max(7),
                targetKeypointsPerView: pos().max(8192),
                maxSide: pos(),
                upsample: z.boolean(),
                checks: pos(),
                neighbours: int().min(2).max(16),
                minInliers: int().min(0),
                angleTolerance: z.number().gt(0).max(180),
                scaleTolerance: z.number().gt(0),
                maxLogNfa: z.number().max(0),
                views: z.enum(['before', 'none']),
                verified: z.boolean(),
              })
              .strict(),
          })
          .strict(),
        epipolar: z
          .object({
            enabled: z.boolean(),
            threshold: z.number().positive(),
            iterations: pos(),
            maxLogNfa: z.number(),
            rotationTolerance: z.number().gt(0).lte(180),
            ratio: z.number().gt(0).lte(1),
            regionRadius: nonneg(),
            mutual: z.boolean(),
            guided: z.boolean(),
          })
          .strict(),
      })
      .strict(),
    comparability: z
      .object({
        weights: z.object({ alpha: nonneg(), beta: nonneg(), gamma: nonneg(), delta: nonneg(), epsilon: nonneg().default(0) }).strict(),
        parWeights: z.object({ alpha: nonneg(), beta: nonneg(), gamma: nonneg(), delta: nonneg(), epsilon: nonneg() }).strict().optional(),
        comMinSignificance: nonneg().default(0),
        // the null margin of C (src/lib/comparability/margin.ts): reference captions a side (0 = off), and how many of
        // a caption's highest C against them make its chance level
        nullMargin: z.object({ sample: int().min(0), top: pos() }).strict().default({ sample: 0, top: 8 }),
        hanziPerWord: z.number().positive(),
        thresholds: z
          .object({ par: z.number(), com: z.number(), pse: z.number() })
          .strict()
          .refine((t) => t.par >= t.com && t.com >= t.pse, 'expected par >= com >= pse'),
        parMinLengthRatio: z.number().min(0).max(1),
        maxCaptionChars: pos(),
        maxSentences: pos().max(64),
      })
      .strict(),
    export: z
      .object({
        minLevel: z.enum(['par', 'com', 'pse']),
        minLevelMoreSentences: z.enum(['par', 'com', 'pse']),
        sentenceMargin: z.number().min(1).default(1),
        firstSentencePrior: z.number().min(1).default(1),
        maxSentences: int().min(0),
        maxChineseWords: int().min(0),
        rescoreDrift: z.number().positive(),
        folder: z.string().min(1),
        nightlyFormats: z.array(z.enum(['tsv', 'jsonl', 'tmx', 'moses'])).min(1),
      })
      .strict(),
    crawler: z
      .object({
        userAgent: z.string().min(3),
        sitesDir: z.string(),
        allowPrivateAddresses: z.boolean(),
        perHostDelayMs: int().min(0),
        perHostConcurrency: pos(),
        maxConcurrency: pos(),
        robotsTtlHours: nonneg(),
        maxPageBytes: pos(),
        maxImageBytes: pos(),
        maxImagePixels: pos(),
        minImageSide: int().min(0),
        maxRedirects: int().min(0),
        maxDepth: int().min(0),
        requestTimeoutSecs: pos(),
        maxPagesPerSite: pos(),
        maxPageElements: pos(),
        maxPageDepth: pos(),
        maxPhotosPerPage: pos(),
        retry: z
          .object({
            triesPerCycle: pos().max(10),
            baseDelayMs: int().min(0),
            maxDelayMs: int().min(0),
            giveUpAfter: pos(),
            maxRetryAfterSecs: nonneg(),
          })
          .strict(),
        hosts: z
          .object({ errorDelayMs: int().min(0), maxDelayMs: int().min(0), recoverRate: z.number().positive(), breakerErrors: int().min(0) })
          .strict(),
      })
      .strict(),
    daemon: z
      .object({
        crawlSchedule: cronExpr,
        exportSchedule: cronExpr,
        shutdownTimeoutSecs: pos(),
        host: z.string().min(1),
        port: int().min(0).max(65535),
      })
      .strict(),
    review: z
      .object({ host: z.string().min(1), port: int().min(0).max(65535), token: z.string() })
      .strict(),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
