import fs from 'node:fs';
import { expect } from 'chai';
import { clearLoadedLexicons, lexiconCacheFile, loadLexicon } from '../src/lib/comparability/lexicon.js';
import { testLexicon, testLexiconDir } from './helpers/comparability.js';

describe('comparability: lexicon', () => {
  it('is built from the packages on first use, cached, and reused from the cache', () => {
    const { lexicon, first } = testLexicon();
    expect(first.fromCache).to.equal(false);
    const file = lexiconCacheFile(testLexiconDir());
    expect(fs.existsSync(file)).to.equal(true);
    expect(lexicon.stats.zhWords).to.be.greaterThan(50_000);
    expect(lexicon.senses('狗')!.some((s) => s.lemmas.includes('dog'))).to.equal(true);
    clearLoadedLexicons();
    const again = loadLexicon({ cacheDir: testLexiconDir() });
    expect(again).not.to.equal(lexicon);
    expect(again.stats.fromCache).to.equal(true);
    expect(again.senses('桌子')!.map((s) => s.text)).to.deep.equal(lexicon.senses('桌子')!.map((s) => s.text));
  });

  it('maps glosses to content lemmas and WordNet compounds, and inverts them for EN→ZH', () => {
    const { lexicon } = testLexicon();
    expect(lexicon.senses('消防栓')!.flatMap((s) => s.lemmas)).to.include('fire_hydrant');
    expect(lexicon.zhFor('giraffe')).to.include('长颈鹿');
    expect(lexicon.properNoun('北京')).to.deep.include({ name: 'Beijing' });
    expect(lexicon.synsets('dog')!.length).to.be.greaterThan(0);
    const puppy = lexicon.synsets('puppy')![0]!;
    expect(lexicon.hypernyms(puppy)).to.include(lexicon.synsets('dog')![0]!);
  });
});
