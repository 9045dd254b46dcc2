#!/usr/bin/env python3
"""Issue 33 round 7: archive matching's losses per query, and choices simulated offline, from dev/archive-loss.ts's
JSON lines (each archived source's comparisons with its fused / plain / dense rankings' first candidates and its true
targets, by the production verification). Usage: python3 dev/archive-loss-sim.py OUT.jsonl [--half dev|check|all]

Per query: the stage where its pair is lost (gate, budget, shortlist: the true target not among the candidates compared,
verify: compared but not verified, score: verified below match.minScore, rank: a wrong image ranks above it, found), and
P@1 and CPU (a fresh bank: a target's dense views are paid the first time any query meets it) of each choice.
"""
import json, sys, statistics

MIN_SCORE, MIN_INLIERS, CONFIDENCE = 0.2, 12, 0.3
args = sys.argv[1:]
half = args[args.index('--half') + 1] if '--half' in args else 'dev'
rows = [json.loads(l) for l in open(args[0]) if l.strip()]
rows = [r for r in rows if half == 'all' or r['half'] == half]


def stored_top(hits):
    ok = [h for h in hits if h['score'] >= MIN_SCORE and h['inliers'] >= MIN_INLIERS and h['score'] > 0]
    ok.sort(key=lambda h: -h['score'])
    return ok[0]['t'] if ok else None


def run(order, n, score=None, stop=True, admit=lambda r: r['reaches']):
    """order(r) -> candidate comps in order; n candidates; score(c) -> archive score (default: as verified)."""
    found, cpu, seen, per, stages = 0, [], set(), {}, {}
    for r in rows:
        truth = set(r['truth'])
        hits = list(r['plainHits'])
        if admit(r) and 'comps' in r:
            ms = r['queryDenseMs'] + r['denseSearchMs']
            cands = order(r)[:n]
            arch = []
            for c in cands:
                ms += c['ms'] + (0 if c['t'] in seen else c['targetDenseMs'])
                seen.add(c['t'])
                s = score(c) if score else c['score']
                if s > 0:
                    arch.append({**c, 'score': s})
                if stop and s >= CONFIDENCE:
                    break
            by = {h['t']: h for h in hits}
            for h in arch:
                if h['t'] not in by or by[h['t']]['score'] < h['score']:
                    by[h['t']] = h
            hits = list(by.values())
            cpu.append(ms)
            sc = lambda c: score(c) if score else c['score']
            every_true = [c for c in r['comps'] if c['true']]
            true_comp = [c for c in cands if c['true']]
            top = stored_top(hits)
            if top in truth:
                st = 'found'
            elif not any(sc(c) > 0 for c in every_true):
                st = 'verify'  # compared or not, the true pair does not verify
            elif not any(sc(c) >= MIN_SCORE and c['inliers'] >= MIN_INLIERS for c in every_true):
                st = 'score'
            elif not any(sc(c) > 0 for c in true_comp):
                st = 'shortlist'  # it would verify, but is not among the candidates compared
            else:
                st = 'rank'
        else:
            top = stored_top(hits)
            st = 'found' if top in truth else ('confident' if not r['unconfident'] else 'gated' if r['gated'] else 'budget' if r['budgeted'] else 'other')
        per[r['id']] = st
        stages[st] = stages.get(st, 0) + 1
        found += st == 'found'
    return found, cpu, per, stages


fused = lambda r: sorted([c for c in r['comps'] if c['fused'] >= 0], key=lambda c: c['fused'])
plain = lambda r: sorted([c for c in r['comps'] if c['plain'] >= 0], key=lambda c: c['plain'])
dense = lambda r: sorted([c for c in r['comps'] if c['dense'] >= 0], key=lambda c: c['dense'])


def rrf(k):
    def order(r):
        cs = [c for c in r['comps'] if c['plain'] >= 0 or c['dense'] >= 0]
        v = lambda c: (1 / (k + c['plain'] + 1) if c['plain'] >= 0 else 0) + (1 / (k + c['dense'] + 1) if c['dense'] >= 0 else 0)
        return sorted(cs, key=lambda c: -v(c))
    return order


def interleave(a, b):
    def order(r):
        out, seen = [], set()
        la, lb = a(r), b(r)
        for i in range(max(len(la), len(lb))):
            for l in (la, lb):
                if i < len(l) and l[i]['t'] not in seen:
                    seen.add(l[i]['t'])
                    out.append(l[i])
        return out
    return order


def summary(name, res):
    found, cpu, per, stages = res
    med = statistics.median(cpu) if cpu else 0
    p95 = sorted(cpu)[max(0, int(round(0.95 * len(cpu))) - 1)] if cpu else 0
    print(f"{name:38s} P@1 {found}/{len(rows)} = {found/len(rows):.3f}  archived {len(cpu)}  cpu sum {sum(cpu)/1000:.1f}s med {med/1000:.1f}s p95 {p95/1000:.1f}s  {stages}")


if __name__ == '__main__':
    print(f"half {half}: {len(rows)} queries")
    # per-query table: where the true pair stands
    for r in rows:
        if 'comps' not in r:
            print(f"  {r['id']} promise {r['promise']:6.1f} {'confident' if not r['unconfident'] else 'gated' if r['gated'] else 'budget' if r['budgeted'] else '?'} plainRank {r['plainRank']}")
            continue
        t = [c for c in r['comps'] if c['true']]
        wrong = sorted([c for c in r['comps'] if not c['true']], key=lambda c: -c['score'])
        w = wrong[0] if wrong else None
        tt = ' | '.join(f"{c['t']} fused {c['fused']} plain {c['plain']} dense {c['dense']} m {c['matches']} in {c['inliers']} nfa {c['logNfa']} sp {c['spread']} sc {c['score']}" for c in t)
        ww = f"best wrong {w['t']} m {w['matches']} in {w['inliers']} nfa {w['logNfa']} sc {w['score']}" if w else ''
        mx = max((c['inliers'] for c in wrong), default=0)
        print(f"  {r['id']} promise {r['promise']:6.1f} {'ARCH' if r['reaches'] else 'gated' if r['gated'] else 'budget'}: {tt} ; {ww} ; max wrong inliers {mx}")
    summary('shipped (fused 8)', run(fused, 8))
    for n in (4, 12, 16, 30):
        summary(f'fused {n}', run(fused, n))
    for k in (1, 5, 10, 20):
        summary(f'rrf k={k}, 8', run(rrf(k), 8))
    for n in (6, 8, 10):
        summary(f'interleave plain-first {n}', run(interleave(plain, dense), n))
        summary(f'interleave dense-first {n}', run(interleave(dense, plain), n))
    summary('plain 8', run(plain, 8))
    summary('dense 8', run(dense, 8))
    summary('fused 8, every unconfident', run(fused, 8, admit=lambda r: r['unconfident']))
    summary('fused 30, every unconfident', run(fused, 30, admit=lambda r: r['unconfident']))
