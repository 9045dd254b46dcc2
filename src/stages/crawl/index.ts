// The crawl stage's public interface (run it through the registry, src/stages/index.ts: loadStage('crawl')): the run
// itself, and what the daemon, the workers and `capbridge extract` read of the site profiles.
export { runCrawl, itemExtId, parseFeedOrSitemap, type CrawlOptions, type CrawlSummary, type SiteFailure } from './stage.js';
export { defaultSitesDir, hostAllowed, isArticle, loadSites, loadSitesReport, parseSite, profileFor, siteSchema, type SiteLoadError, type SiteProfile } from './sites.js';
export { fetchLimited } from './fetch.js';
export { scanPage } from './page-scan.js';
