// The page's CSS and JS, served from the package (/assets/...): no CDN, nothing fetched from elsewhere.
export const CSS = `
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans CJK SC","Noto Sans SC",sans-serif;color:#222;background:#fafafa}
header{padding:8px 16px;background:#23303f;color:#fff}header a{color:#cfe0ff;margin-left:14px;text-decoration:none}header a.on{color:#fff;text-decoration:underline}
main{padding:12px 16px}a{color:#2a5db0}.muted{color:#777}.err{color:#a11}
form.filters{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:end;margin-bottom:10px;padding:8px;background:#fff;border:1px solid #ddd}
form.filters label{display:flex;flex-direction:column;font-size:12px;color:#555}form.filters input{width:7em}
table.pairs{border-collapse:collapse;width:100%;background:#fff}table.pairs td,table.pairs th{border-bottom:1px solid #e4e4e4;padding:6px;vertical-align:top;text-align:left}
table.pairs tr.sel{outline:2px solid #2a5db0}table.pairs img{max-width:120px;max-height:120px;display:block}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.lv{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}.lv-par{background:#1b7f3b}.lv-com{background:#3b6fb6}.lv-pse{background:#c98a1a}.lv-inc{background:#999}
.verdict-accepted{color:#1b7f3b;font-weight:600}.verdict-rejected{color:#a11;font-weight:600}
svg.matches{width:100%;max-height:80vh;background:#eee;display:block}svg.matches line{stroke-width:1.5;vector-effect:non-scaling-stroke}
svg.matches line.inlier{stroke:#18d04a;opacity:.8}svg.matches line.rejected{stroke:#e0403a;stroke-dasharray:3 3;opacity:.6}
.captions{display:grid;grid-template-columns:1fr 1fr;gap:16px;margin:12px 0}.caption{background:#fff;border:1px solid #ddd;padding:10px;font-size:17px}
mark.hl{padding:0 2px;border-radius:2px;cursor:help}mark.ent{outline:1px dashed #333}
mark.c0{background:#ffd54f}mark.c1{background:#81d4fa}mark.c2{background:#a5d6a7}mark.c3{background:#f48fb1}mark.c4{background:#ce93d8}
mark.c5{background:#ffab91}mark.c6{background:#80cbc4}mark.c7{background:#e6ee9c}mark.c8{background:#b0bec5}mark.c9{background:#bcaaa4}
.scores{display:flex;gap:18px;flex-wrap:wrap;align-items:center;margin:8px 0}.scores b{font-variant-numeric:tabular-nums}
.judge{padding:8px;background:#fff;border:1px solid #ddd;margin:8px 0}.judge button{margin-right:6px}kbd{border:1px solid #aaa;border-radius:3px;padding:0 4px;font-size:12px;background:#f4f4f4}
table.legend td{padding:2px 8px}.prov{display:grid;grid-template-columns:1fr 1fr;gap:16px;font-size:13px}
.drop{border:2px dashed #99a;padding:24px;text-align:center;background:#fff}.results img{max-height:120px}
`;

export const JS = `
(function(){
  'use strict';
  var body = document.body;
  function post(url, data){
    return fetch(url, {method:'POST', headers:{'Content-Type':'application/json'}, body: JSON.stringify(data), credentials:'same-origin'})
      .then(function(r){ return r.json().then(function(j){ if(!r.ok) throw new Error(j.message || r.statusText); return j; }); });
  }
  function showReview(el, rv){
    if(!el) return;
    el.textContent = !rv ? 'not reviewed' : [rv.verdict || '', rv.level ? 'level ' + rv.level : ''].filter(Boolean).join(', ') + ' (' + rv.reviewedAt + ')';
    el.className = 'review-state' + (rv && rv.verdict ? ' verdict-' + rv.verdict : '');
    el.setAttribute('data-verdict', rv && rv.verdict ? rv.verdict : '');
    el.setAttribute('data-level', rv && rv.level ? rv.level : '');
  }
  var LEVELS = {'1':'par','2':'com','3':'pse','4':'inc'};
  function judge(url, key, stateEl){
    var data = key === 'a' ? {verdict:'accepted'} : key === 'r' ? {verdict:'rejected'} : key === 'u' ? {verdict:null, level:null} : {level: LEVELS[key]};
    return post(url, data).then(function(j){ showReview(stateEl, j.review); }, function(e){ if(stateEl) stateEl.textContent = 'error: ' + e.message; });
  }
  function typing(e){ var t = e.target; return t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA'); }

  var view = document.querySelector('[data-pair-view]');
  if(view){
    var url = view.getAttribute('data-review-url'), state = document.getElementById('review-state');
    document.querySelectorAll('button[data-key]').forEach(function(b){ b.addEventListener('click', function(){ judge(url, b.getAttribute('data-key'), state); }); });
    document.addEventListener('keydown', function(e){
      if(typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      var k = e.key;
      if(k === 'a' || k === 'r' || k === 'u' || LEVELS[k]){ e.preventDefault(); judge(url, k, state); }
      else if(k === 'j' || k === 'k'){
        var to = view.getAttribute(k === 'j' ? 'data-next' : 'data-prev');
        if(to) location.href = to; else { var m = document.getElementById('nav-msg'); if(m) m.textContent = k === 'j' ? 'last pair of the list' : 'first pair of the list'; }
      }
    });
  }

  var list = document.querySelector('table.pairs');
  if(list){
    var rows = Array.prototype.slice.call(list.querySelectorAll('tbody tr[data-review-url]')), sel = -1;
    function select(i){ if(!rows.length) return; if(sel >= 0) rows[sel].classList.remove('sel'); sel = Math.max(0, Math.min(rows.length - 1, i)); rows[sel].classList.add('sel'); rows[sel].scrollIntoView({block:'nearest'}); }
    document.addEventListener('keydown', function(e){
      if(typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      var k = e.key;
      if(k === 'j'){ e.preventDefault(); select(sel + 1); }
      else if(k === 'k'){ e.preventDefault(); select(sel - 1); }
      else if((k === 'Enter' || k === 'o') && sel >= 0){ location.href = rows[sel].getAttribute('data-href'); }
      else if(sel >= 0 && (k === 'a' || k === 'r' || k === 'u' || LEVELS[k])){ e.preventDefault(); judge(rows[sel].getAttribute('data-review-url'), k, rows[sel].querySelector('.review-state')); }
    });
  }

  var drop = document.getElementById('search-drop');
  if(drop){
    var out = document.getElementById('search-results'), input = document.getElementById('search-file');
    function esc(s){ return String(s == null ? '' : s).replace(/[&<>"']/g, function(c){ return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]; }); }
    function send(file){
      if(!file) return;
      out.textContent = 'searching…';
      fetch('/api/search?top=' + encodeURIComponent(document.getElementById('search-top').value || '10'), {method:'POST', headers:{'Content-Type': 'application/octet-stream'}, body:file, credentials:'same-origin'})
        .then(function(r){ return r.json().then(function(j){ if(!r.ok) throw new Error(j.message || r.statusText); return j; }); })
        .then(function(j){
          if(!j.results.length){ out.innerHTML = '<p>No matching target image.</p>'; return; }
          out.innerHTML = '<table class="pairs results"><thead><tr><th>#</th><th>image</th><th>caption</th><th>score</th><th>inliers</th></tr></thead><tbody>' +
            j.results.map(function(r, i){ return '<tr><td>' + (i + 1) + '</td><td><img src="/thumb/' + esc(r.imageSha256) + '" alt=""></td><td>' + esc(r.caption) + '<div class="muted">' + esc(r.extId) + ' ' + (/^https?:/i.test(r.pageUrl || '') ? '<a href="' + esc(r.pageUrl) + '" rel="noreferrer">page</a>' : esc(r.pageUrl || '')) + '</div></td><td>' + esc(Number(r.score).toFixed(3)) + '</td><td>' + esc(r.inliers) + '</td></tr>'; }).join('') + '</tbody></table>';
        }, function(e){ out.innerHTML = '<p class="err">' + esc(e.message) + '</p>'; });
    }
    input.addEventListener('change', function(){ send(input.files[0]); });
    drop.addEventListener('dragover', function(e){ e.preventDefault(); });
    drop.addEventListener('drop', function(e){ e.preventDefault(); send(e.dataTransfer.files[0]); });
    document.addEventListener('paste', function(e){
      var items = (e.clipboardData || {}).items || [];
      for(var i = 0; i < items.length; i++){ if(items[i].kind === 'file'){ send(items[i].getAsFile()); e.preventDefault(); return; } }
    });
  }
})();
`;
