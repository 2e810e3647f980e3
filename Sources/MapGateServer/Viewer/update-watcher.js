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
  // The overlay over the map: what it says (a heading, a paragraph, a store link), or hidden.
  function overlay(title, text, storeURL) {
    const gate = document.getElementById('gate');
    if (!gate) return;
    if (title === null) { if (gate.dataset.watcher) { gate.style.display = 'none'; gate.textContent = ''; delete gate.dataset.watcher; } return; }
    gate.style.display = 'block'; gate.textContent = ''; gate.dataset.watcher = 'shown';
    const h = document.createElement('h1'); h.textContent = title; gate.appendChild(h);
    const p = document.createElement('p'); p.textContent = text; gate.appendChild(p);
    const url = safeURL(storeURL);
    if (url) { const a = document.createElement('a'); a.href = url; a.target = '_blank'; a.rel = 'noopener noreferrer'; a.id = 'store-link'; a.textContent = words.store; p.appendChild(document.createTextNode(' ')); p.appendChild(a); }
  }
  function show(health) {
    const u = health.update;
    const bar = document.getElementById('update'), prompt = document.getElementById('prompt');
    // Closed is what the server says of its tiles: a server whose own use closed the gate serves
    // out that use's day (update.state closed, gate open; found by an attack: the overlay hid the
    // map it served), and its page asks as on the terminal, this use the last.
    if (health.gate === 'closed') {
      overlay(words.required, fill(words.install, [(u && u.version) || health.requiredVersion || '']), u && u.storeURL);
      bar.style.display = 'none'; prompt.style.display = 'none'; return;
    }
    // The server cannot check the gate (its state held or unreadable): it answers tiles 503,
    // and the map must not look as if all were well (found by an attack: old tiles stayed).
    if (health.gate === 'failing') {
      overlay(words.paused, words.pausedReason, null);
      bar.style.display = 'none'; prompt.style.display = 'none'; return;
    }
    overlay(null);
    if (!u) { bar.style.display = 'none'; prompt.style.display = 'none'; return; }
    if (u.state === 'grace') {
      // The day in the browser's own format (en-GB reads 3/1 as 3 January), whatever the page's language.
      const day = u.promptsFrom ? new Date(u.promptsFrom).toLocaleDateString(navigator.languages && navigator.languages.length ? navigator.languages : lang) : '';
      bar.textContent = fill(words.soon, [u.version, day]); bar.style.display = 'block'; return;
    }
    bar.style.display = 'none';
    if ((u.state !== 'prompting' && u.state !== 'closed') || dismissed || prompt.style.display === 'block') return;
    prompt.querySelector('h2').textContent = fill(words.available, [u.version, installed]);
    const notes = prompt.querySelector('ul'); notes.textContent = '';
    (u.releaseNotes || []).forEach(function (line) { const li = document.createElement('li'); li.textContent = line; notes.appendChild(li); });
    // Counted as the terminal's question counts them: the server's own use included.
    const left = typeof u.usesLeftThisIncluded === 'number' ? u.usesLeftThisIncluded : u.usesLeft;
    prompt.querySelector('.left').textContent = words.left[Math.max(1, Math.min(left, words.left.length)) - 1];
    const now = document.getElementById('update-now'), later = document.getElementById('later');
    now.textContent = words.updateNow; later.textContent = words.later;
    const url = safeURL(u.storeURL);
    if (url) { now.href = url; now.style.display = ''; } else { now.removeAttribute('href'); now.style.display = 'none'; }
    prompt.style.display = 'block';
  }
  document.getElementById('later').addEventListener('click', function () { dismissed = true; document.getElementById('prompt').style.display = 'none'; });
  document.getElementById('update-now').addEventListener('click', function () { dismissed = true; document.getElementById('prompt').style.display = 'none'; });
  // A server that does not answer (stopped, or the machine asleep) is said on the bar, and so is
  // a region that is no longer installed (its TileJSON is 404): the map stays, but not as current.
  function unreachable() {
    const bar = document.getElementById('update');
    bar.textContent = words.offline; bar.style.display = 'block'; bar.dataset.problem = 'offline';
  }
  function look() {
    // An answer that does not come in 10 s is none (a port held with nobody answering on it).
    const control = typeof AbortController === 'function' ? new AbortController() : null;
    const timer = control ? setTimeout(function () { control.abort(); }, 10000) : null;
    fetch('/health', { cache: 'no-store', signal: control ? control.signal : undefined }).then(function (r) { clearTimeout(timer); return r.json(); }).then(function (health) {
      const bar = document.getElementById('update');
      // System mode between sessions: the machine's port answers, but no server is behind it.
      // What the overlay said stays (a closed gate is still closed: found by an attack, the bar
      // alone said to run mapgate open, which would refuse).
      if (health.status === 'no-session') {
        document.getElementById('prompt').style.display = 'none';
        bar.textContent = words.noSession; bar.style.display = 'block'; bar.dataset.problem = 'no-session';
        return;
      }
      delete bar.dataset.problem;
      show(health);
      if (typeof page.id !== 'string') return;
      return fetch('/' + encodeURIComponent(page.id) + '.json', { method: 'HEAD', cache: 'no-store' }).then(function (r) {
        if (r.status !== 404) return;
        bar.textContent = words.removed; bar.style.display = 'block'; bar.dataset.problem = 'removed';
      });
    }).catch(unreachable);
  }
  look(); setInterval(look, 30000);
  // A tile refused or missing is looked into at once (at most every 2 s), not at the next 30 s.
  let pending = null;
  window.mapgateLook = function () { if (!pending) pending = setTimeout(function () { pending = null; look(); }, 2000); };
})();
