import FoundationEssentials
import MapGateBase

/// What the viewer pages (the region list and both viewers) tell the person looking at the map
/// about the update gate, in the page's language (issue 37): they read `/health` on load and every
/// 30 seconds, and while a newer version is known show
/// - during the grace, a small notice (the version, the day prompts start);
/// - after it, a prompt on each page load: the version, the release notes (as text), the uses
///   left ("this one included", as the terminal says), **Update now** (opens the store's page)
///   and **Later** (dismisses it for this page);
/// - once the gate is closed, an overlay saying what to install, with a link to the store.
/// The page only tells: the server counts its uses as it always has.
extension ViewerPage {
    /// The pieces a page adds: its style, its elements and its script.
    struct UpdateWatcher {
        var style: String
        var body: String
        var script: String
    }

    /// The most uses a policy gives that the page has words for; more read as this many.
    static let usesLeftWords = 10

    static func updateWatcher(language: PageLanguage) -> UpdateWatcher {
        // The page fills a message's placeholders itself: each is left as U+0001 and its number.
        func slot(_ number: Int) -> String { "\u{1}\(number)" }
        let usesLeft = (1...usesLeftWords).map { count -> String in
            let left = language.localized(singular: "%d use left, this one included", plural: "%d uses left, this one included", count: count)
            let after = count - 1
            let then = after == 0
                ? language.localized("after this one mapgate requires the update.")
                : language.localized(singular: "after %d more mapgate requires the update.", plural: "after %d more mapgate requires the update.", count: after)
            return jsonString(language.localized("%1$s: %2$s", left.replacing("%d", with: String(count)), then.replacing("%d", with: String(after))))
        }
        let style = """
            #update{position:absolute;z-index:1500;left:50%;bottom:2.5em;transform:translateX(-50%);background:#fff8e1;color:#5d4200;
            padding:.4em 1em;border-radius:4px;box-shadow:0 1px 4px #0004;display:none;max-width:80%}
            #prompt{position:absolute;z-index:1800;inset:0;background:#0006;display:none}#prompt>div{background:#fff;max-width:32em;
            margin:10vh auto;padding:1.2em 1.6em;border-radius:6px;box-shadow:0 2px 12px #0006}#prompt ul{color:#444}
            #prompt .buttons{margin-top:1em;text-align:right}#prompt .buttons a,#prompt .buttons button{font:inherit;margin-left:.6em;
            padding:.4em 1em;border-radius:4px;border:1px solid #1565c0;cursor:pointer;text-decoration:none}
            #update-now{background:#1565c0;color:#fff}#later{background:#fff;color:#1565c0}
            """
        let body = """
            <div id="update"></div><div id="prompt" role="dialog" aria-modal="true"><div><h2></h2><ul></ul><p class="left"></p>
            <div class="buttons"><button id="later" type="button"></button><a id="update-now" target="_blank" rel="noopener noreferrer"></a></div></div></div>
            """
        let script = """
            (function () {
              const words = { available: \(jsonString(language.localized("mapgate %1$s is available (you have %2$s).", slot(1), slot(2)))), soon: \(jsonString(language.localized("mapgate %1$s is available; please update (prompts start %2$s)", slot(1), slot(2)))),
                updateNow: \(jsonString(language.localized("Update now"))), later: \(jsonString(language.localized("Later"))), required: \(jsonString(language.localized("Update required"))),
                install: \(jsonString(language.localized("Install mapgate %1$s to keep using these maps.", slot(1)))), store: \(jsonString(language.localized("Update from the store"))),
                left: [\(usesLeft.joined(separator: ", "))] };
              const installed = \(jsonString(BuildInfo.version));
              const lang = \(jsonString(language.tag));
              function fill(text, values) { return values.reduce(function (t, v, i) { return t.split('\\u0001' + (i + 1)).join(v); }, text); }
              function safeURL(u) { return typeof u === 'string' && /^https?:\\/\\//.test(u) ? u : null; }
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
            """
        return UpdateWatcher(style: style, body: body, script: script)
    }
}
