// What every page tells about the update gate (ViewerPage+Update.swift). `page.update` (set
// before this script) holds words (the page's language; a message's placeholders are U+0001 and
// their number), installed (mapgate's version) and lang (the page's language tag).
(function () {
  const words = page.update.words;
  const installed = page.update.installed;
  const lang = page.update.lang;
  function fill(text, values) { return values.reduce(function (t, v, i) { return t.split('\u0001' + (i + 1)).join(v); }, text); }
  function safeURL(u) { return typeof u === 'string' && /^https?:\/\//.test(u) ? u : null; }
  let dismissed = false;
  function show(health) {
    const u = health.update;
    const bar = document.getElementById('update'), prompt = document.getElementById('prompt'), gate = document.getElementById('gate');
    const closed = health.gate === 'closed' || (u && u.state === 'closed');
    if (closed && gate) {
      gate.style.display = 'block'; gate.textContent = '';
      const h = document.createElement('h1'); h.textContent = words.required; gate.appendChild(h);
      const p = document.createElement('p'); p.textContent = fill(words.install, [(u && u.version) || health.requiredVersion || '']); gate.appendChild(p);
      const url = safeURL(u && u.storeURL);
      if (url) { const a = document.createElement('a'); a.href = url; a.target = '_blank'; a.rel = 'noopener noreferrer'; a.id = 'store-link'; a.textContent = words.store; p.appendChild(document.createTextNode(' ')); p.appendChild(a); }
      bar.style.display = 'none'; prompt.style.display = 'none'; return;
    }
    if (!u) { bar.style.display = 'none'; prompt.style.display = 'none'; return; }
    if (u.state === 'grace') {
      const day = u.promptsFrom ? new Date(u.promptsFrom).toLocaleDateString(lang) : '';
      bar.textContent = fill(words.soon, [u.version, day]); bar.style.display = 'block'; return;
    }
    bar.style.display = 'none';
    if (u.state !== 'prompting' || dismissed || prompt.style.display === 'block') return;
    prompt.querySelector('h2').textContent = fill(words.available, [u.version, installed]);
    const notes = prompt.querySelector('ul'); notes.textContent = '';
    (u.releaseNotes || []).forEach(function (line) { const li = document.createElement('li'); li.textContent = line; notes.appendChild(li); });
    prompt.querySelector('.left').textContent = words.left[Math.max(1, Math.min(u.usesLeft, words.left.length)) - 1];
    const now = document.getElementById('update-now'), later = document.getElementById('later');
    now.textContent = words.updateNow; later.textContent = words.later;
    const url = safeURL(u.storeURL);
    if (url) { now.href = url; now.style.display = ''; } else { now.removeAttribute('href'); now.style.display = 'none'; }
    prompt.style.display = 'block';
  }
  document.getElementById('later').addEventListener('click', function () { dismissed = true; document.getElementById('prompt').style.display = 'none'; });
  document.getElementById('update-now').addEventListener('click', function () { dismissed = true; document.getElementById('prompt').style.display = 'none'; });
  function look() { fetch('/health', { cache: 'no-store' }).then(function (r) { return r.json(); }).then(show).catch(function () {}); }
  look(); setInterval(look, 30000);
})();
