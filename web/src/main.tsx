import { options, render } from 'preact';
import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, approveTurn, chatStream, client, health as healthReport, loadKey, ok, onSignOut, resumeStream, setKey, setToken } from './api';
import { resumable } from './resume';
import { authConfig, begin, complete, isCallback, SignInError, type AuthConfig } from './oidc';
import { browserLang, errorText, strings, type Lang, type Strings } from './i18n';
import { renderMarkdown } from './markdown';
import { endOfStream, initialTurn, mergeGraph, parseGraph, reduce, reportCounts, type GraphData, type TurnState } from './reducer';
import { nodeFor, parseSources, resolveCitations, type Citation, type Source } from './cite';
import './style.css';

// At most one render per frame: a batch streams hundreds of progress events in a burst.
options.debounceRendering = (cb) => (document.hidden ? setTimeout(cb) : requestAnimationFrame(cb));

type Page = 'chat' | 'actions' | 'documents' | 'status';
const PAGES: Page[] = ['chat', 'actions', 'documents', 'status'];

function pageFromHash(): Page {
  const p = location.hash.replace(/^#\/?/, '') as Page;
  return PAGES.includes(p) ? p : 'chat';
}

function describe(t: Strings, e: unknown): string {
  if (e instanceof ApiError) return errorText(t, e.status, e.code, e.message);
  return String(e);
}

function App() {
  const [lang, setLang] = useState<Lang>(() => (localStorage.getItem('kg-agent.lang') as Lang) || browserLang());
  const [dark, setDark] = useState(() => {
    const s = localStorage.getItem('kg-agent.theme');
    return s ? s === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  });
  // Back from the OpenID Connect provider: finish the sign-in before anything else.
  const [callback] = useState(() => isCallback(location.search));
  const [signedIn, setSignedIn] = useState(() => !callback && loadKey() !== '');
  const [completing, setCompleting] = useState(callback);
  const [notice, setNotice] = useState<string | undefined>();
  const [page, setPage] = useState<Page>(pageFromHash);
  // A cited document to show on the Documents page (a new object per click re-focuses it).
  const [docFocus, setDocFocus] = useState<DocFocus | undefined>();
  const t = strings[lang];

  useEffect(() => {
    onSignOut((reason) => {
      setNotice(reason === 'expired' ? 'expired' : 'rejected');
      setSignedIn(false);
    });
    if (!callback) return;
    complete()
      .then((s) => {
        setToken(s.accessToken, s.expiresAt, s.refresh);
        setSignedIn(true);
      })
      .catch((e: unknown) => setNotice(e instanceof SignInError ? `oidc:${e.code}:${e.message}` : `oidc:token:${String(e)}`))
      .finally(() => setCompleting(false));
  }, []);

  useEffect(() => {
    const f = () => {
      const next = pageFromHash();
      setPage(next);
      // A cited document is shown once; a later visit to Documents starts plain.
      if (next !== 'documents') setDocFocus(undefined);
    };
    addEventListener('hashchange', f);
    return () => removeEventListener('hashchange', f);
  }, []);
  useEffect(() => {
    document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
    localStorage.setItem('kg-agent.lang', lang);
  }, [lang]);
  useEffect(() => {
    document.documentElement.dataset.theme = dark ? 'dark' : 'light';
    localStorage.setItem('kg-agent.theme', dark ? 'dark' : 'light');
  }, [dark]);

  const toolbar = (
    <div class="toolbar">
      <button
        type="button"
        aria-label={`${lang === 'en' ? '中文' : 'English'} (${t.language})`}
        onClick={() => setLang(lang === 'en' ? 'zh' : 'en')}
      >
        {lang === 'en' ? '中文' : 'English'}
      </button>
      <button type="button" aria-label={t.theme} aria-pressed={dark} onClick={() => setDark(!dark)}>
        {dark ? '☀' : '☾'}
      </button>
    </div>
  );

  if (completing) {
    return (
      <div class="signin">
        <p role="status">{t.signingIn}</p>
      </div>
    );
  }
  if (!signedIn) {
    return (
      <SignIn
        t={t}
        toolbar={toolbar}
        notice={notice}
        onDone={() => {
          setNotice(undefined);
          setSignedIn(true);
        }}
      />
    );
  }

  return (
    <div class="shell">
      <header class="top">
        <strong class="brand">{t.app}</strong>
        <nav aria-label="main">
          {PAGES.map((p) => (
            <a href={`#/${p}`} aria-current={page === p ? 'page' : undefined} key={p}>
              {t[p === 'actions' ? 'actionLog' : p]}
            </a>
          ))}
        </nav>
        {toolbar}
        <button
          type="button"
          class="link"
          onClick={() => {
            setKey('', false);
            setSignedIn(false);
          }}
        >
          {t.signOut}
        </button>
      </header>
      <main>
        {/* The chat stays mounted so its turns survive visits to the other pages. */}
        <div class="chat-page" hidden={page !== 'chat'}>
          <Chat
            t={t}
            dark={dark}
            onOpenDocument={(f) => {
              setDocFocus(f);
              location.hash = '#/documents';
            }}
          />
        </div>
        {page === 'actions' && <ActionLog t={t} />}
        {page === 'documents' && <Documents t={t} focus={docFocus} />}
        {page === 'status' && <Status t={t} />}
      </main>
    </div>
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function noticeText(t: Strings, notice: string): string {
  if (notice === 'expired') return t.sessionExpired;
  if (notice === 'rejected') return t.err.unauthorized;
  const [, code, ...rest] = notice.split(':');
  if (code === 'state_mismatch' || code === 'no_pending' || code === 'issuer_mismatch') return t.oidcStateMismatch;
  return `${t.oidcFailed}: ${rest.join(':')}`;
}

function SignIn({ t, toolbar, notice, onDone }: { t: Strings; toolbar: preact.JSX.Element; notice?: string; onDone: () => void }) {
  const [key, setK] = useState('');
  const [remember, setRemember] = useState(true);
  const [config, setConfig] = useState<AuthConfig | undefined>();
  const [failed, setFailed] = useState<string | undefined>();
  useEffect(() => {
    authConfig().then(setConfig);
  }, []);
  const oidc = config?.oidc;
  const keys = !config || config.modes.includes('api_key') || !oidc;
  const message = failed ?? (notice ? noticeText(t, notice) : undefined);
  return (
    <div class="signin">
      {toolbar}
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
      {oidc && (
        <div class="sso">
          <h1>{t.signIn}</h1>
          <button
            type="button"
            onClick={() => {
              setFailed(undefined);
              begin(oidc).catch((e: unknown) => setFailed(`${t.oidcFailed}: ${e instanceof Error ? e.message : String(e)}`));
            }}
          >
            {t.signInWith} {hostOf(oidc.issuer)}
          </button>
        </div>
      )}
      {keys && (
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!key.trim()) return;
          setKey(key.trim(), remember);
          onDone();
        }}
      >
        {oidc ? <h2>{t.orApiKey}</h2> : <h1>{t.signIn}</h1>}
        <label for="key">{t.apiKey}</label>
        <input id="key" type="password" autocomplete="off" value={key} onInput={(e) => setK(e.currentTarget.value)} />
        <p class="help">{t.apiKeyHelp}</p>
        <label class="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} /> {t.remember}
        </label>
        <button type="submit">{t.continue}</button>
      </form>
      )}
    </div>
  );
}

// ---------------------------------------------------------------- chat

interface Turn {
  question: string;
  state: TurnState;
  apiError?: string;
  approving?: boolean;
  decided?: 'approved' | 'rejected';
  /** The reconnection attempt under way after a network drop (0 or undefined: none). */
  reconnecting?: number;
}
interface ConvMeta {
  id: string;
  title: string;
}
const CONVS = 'kg-agent.conversations';
const loadConvs = (): ConvMeta[] => {
  try {
    const v: unknown = JSON.parse(localStorage.getItem(CONVS) ?? '[]');
    return Array.isArray(v) ? v.filter((c) => typeof c?.id === 'string').map((c) => ({ id: String(c.id), title: String(c.title ?? c.id) })) : [];
  } catch {
    return [];
  }
};

/** A cited document (and passage) to open on the Documents page. */
interface DocFocus {
  document: string;
  chunk?: string;
  /** The question the passage answered: finds the passage again with a search. */
  query: string;
}

/** Sources that neither the graph nor their id shape places: maybe document ids. */
const unplaced = (sources: Source[], graph: GraphData | undefined): boolean =>
  resolveCitations(sources, graph?.nodes ?? [], new Set()).some((c) => c.kind === 'entity' && c.nodeId === undefined);

function Chat({ t, dark, onOpenDocument }: { t: Strings; dark: boolean; onOpenDocument: (f: DocFocus) => void }) {
  const [convs, setConvs] = useState<ConvMeta[]>(loadConvs);
  const [current, setCurrent] = useState<string | undefined>();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [input, setInput] = useState('');
  const [busy, setBusy] = useState(false);
  const [graph, setGraph] = useState<GraphData | undefined>();
  // A cited entity to show in the graph (an object, so citing the same id again re-focuses).
  const [focus, setFocus] = useState<{ id: string } | undefined>();
  // The ids of the ingested documents, so a cited document id is told from an entity id.
  const [docIds, setDocIds] = useState<ReadonlySet<string>>(new Set());
  const [citeError, setCiteError] = useState<string | undefined>();
  const abort = useRef<AbortController | null>(null);
  // Conversations started in this tab (kept while the service's list is on its way).
  const fresh = useRef(new Set<string>());
  const bottom = useRef<HTMLDivElement>(null);

  useEffect(() => localStorage.setItem(CONVS, JSON.stringify(convs)), [convs]);
  // The service's list of this caller's conversations replaces the browser's record (which
  // may hold another user's, or miss those started elsewhere); a title renamed here stays.
  useEffect(() => {
    ok(client.GET('/conversations'))
      .then((r) => {
        if (!Array.isArray(r.conversations)) return;
        const listed = r.conversations.filter((c) => typeof c.id === 'string');
        setConvs((local) => {
          const titles = new Map(local.map((c) => [c.id, c.title]));
          const known = new Set(listed.map((c) => c.id as string));
          const started = local.filter((c) => !known.has(c.id) && fresh.current.has(c.id));
          return [...started, ...listed.map((c) => ({ id: c.id as string, title: titles.get(c.id as string) ?? (String(c.title ?? '') || (c.id as string)) }))];
        });
      })
      .catch(() => {
        /* an older service or a failure: keep the browser's own record */
      });
  }, []);
  useEffect(() => bottom.current?.scrollIntoView?.({ block: 'end' }), [turns]);

  const update = (i: number, f: (turn: Turn) => Turn) => setTurns((ts) => ts.map((x, j) => (j === i ? f(x) : x)));

  async function send(message: string) {
    if (!message.trim() || busy) return;
    const index = turns.length;
    setTurns((ts) => [...ts, { question: message, state: initialTurn() }]);
    setInput('');
    setBusy(true);
    const ctl = new AbortController();
    abort.current = ctl;
    let conv = current;
    try {
      const events = resumable(ctl.signal, {
        open: (signal) => chatStream({ message, conversation_id: conv }, signal),
        reopen: resumeStream,
        onReconnect: (attempt) => update(index, (turn) => ({ ...turn, reconnecting: attempt })),
      });
      for await (const m of events) {
        const now = performance.now();
        update(index, (turn) => {
          const state = reduce(turn.state, m.event, m.data, now);
          if (state.graph && state.graph !== turn.state.graph) setGraph(state.graph);
          if (state.conversationId && !conv) {
            conv = state.conversationId;
            setCurrent(conv);
            fresh.current.add(conv);
            setConvs((cs) => (cs.some((c) => c.id === conv) ? cs : [{ id: conv as string, title: message.slice(0, 60) }, ...cs]));
          }
          return { ...turn, state };
        });
      }
      update(index, (turn) => {
        if (unplaced(turn.state.sources, turn.state.graph)) void loadDocIds();
        return { ...turn, state: endOfStream(turn.state, 'eof', performance.now()) };
      });
    } catch (e) {
      const stopped = e instanceof DOMException && e.name === 'AbortError';
      update(index, (turn) => ({
        ...turn,
        state: endOfStream(turn.state, stopped ? 'stopped' : 'network', performance.now()),
        apiError: stopped ? undefined : describe(t, e),
        reconnecting: 0,
      }));
    } finally {
      setBusy(false);
      abort.current = null;
    }
  }

  async function loadDocIds() {
    try {
      const r = await ok(client.GET('/documents'));
      if (Array.isArray(r.documents)) setDocIds(new Set(r.documents.map((d) => d.id).filter((id): id is string => typeof id === 'string')));
    } catch {
      /* without the list, a bare document id is offered as an entity */
    }
  }

  /** Shows a cited entity: in the graph on screen, else the turn's own graph, else its
   * neighbourhood fetched with the get_instance_neighbors tool. */
  async function citeEntity(c: Extract<Citation, { kind: 'entity' }>, turnGraph: GraphData | undefined) {
    setCiteError(undefined);
    const find = (g: GraphData | undefined) => (g ? (c.nodeId !== undefined && g.nodes.some((n) => n.id === c.nodeId) ? c.nodeId : nodeFor(c.reference, g.nodes)) : undefined);
    const shown = find(graph);
    if (shown !== undefined) return setFocus({ id: shown });
    const own = find(turnGraph);
    if (own !== undefined && turnGraph) {
      setGraph(mergeGraph(graph, turnGraph));
      return setFocus({ id: own });
    }
    try {
      const r = await ok(client.POST('/tools/get_instance_neighbors', { body: { instance: c.reference, hops: 1 } }));
      const fetched = parseGraph(r.graph_data);
      const node = find(fetched);
      if (!fetched || node === undefined) throw new Error(c.reference);
      setGraph(mergeGraph(graph, fetched));
      setFocus({ id: node });
    } catch (e) {
      setCiteError(`${t.citeFailed}: ${c.label}${e instanceof ApiError ? ` — ${describe(t, e)}` : ''}`);
    }
  }

  async function decide(i: number, approve: boolean) {
    const turn = turns[i];
    const token = turn?.state.approval?.token;
    if (!token) return;
    update(i, (x) => ({ ...x, approving: true }));
    try {
      const answer = await approveTurn({ approval_token: token, approve });
      if ('events' in answer) {
        update(i, (x) => ({ ...x, approving: false, decided: approve ? 'approved' : 'rejected', state: { ...x.state, status: 'streaming' } }));
        // The approval is sent once; a dropped batch stream resumes like a chat turn's.
        const events = resumable(new AbortController().signal, {
          open: () => answer.events,
          reopen: resumeStream,
          onReconnect: (attempt) => update(i, (x) => ({ ...x, reconnecting: attempt })),
        });
        for await (const m of events) {
          const now = performance.now();
          update(i, (x) => ({ ...x, state: reduce(x.state, m.event, m.data, now) }));
        }
        update(i, (x) => ({ ...x, approving: false, state: endOfStream(x.state, 'eof', performance.now()) }));
        return;
      }
      const r = answer.json;
      const counts = reportCounts(r.actions);
      update(i, (x) => ({
        ...x,
        approving: false,
        decided: approve ? 'approved' : 'rejected',
        state: {
          ...x.state,
          report: (r.actions as Record<string, unknown>) ?? x.state.report,
          progress: counts ?? x.state.progress,
          failures: Array.isArray((r.actions as Record<string, unknown>)?.failures)
            ? ((r.actions as Record<string, unknown>).failures as Record<string, unknown>[]).map((f) => ({
                entity_id: String(f.entity_id ?? ''),
                reason: String(f.reason ?? ''),
                error: String(f.error ?? ''),
              }))
            : x.state.failures,
          text: x.state.text + (typeof r.answer === 'string' ? `\n\n${r.answer}` : ''),
          sources: r.sources !== undefined ? parseSources(r.sources) : x.state.sources,
        },
      }));
    } catch (e) {
      update(i, (x) => ({ ...x, approving: false, reconnecting: 0, state: endOfStream(x.state, 'network', performance.now()), apiError: describe(t, e) }));
    }
  }

  async function open(id: string) {
    abort.current?.abort();
    setCurrent(id);
    setGraph(undefined);
    try {
      const c = await ok(client.GET('/conversations/{id}', { params: { path: { id } } }));
      const list = Array.isArray(c.turns) ? (c.turns as Record<string, unknown>[]) : [];
      const out: Turn[] = [];
      for (const x of list) {
        const content = typeof x.content === 'string' ? x.content : '';
        if (x.role === 'user') out.push({ question: content, state: { ...initialTurn(), status: 'done' } });
        else if (out.length > 0) out[out.length - 1].state.text += content;
      }
      setTurns(out);
    } catch (e) {
      setTurns([{ question: '', state: { ...initialTurn(), status: 'error' }, apiError: describe(t, e) }]);
    }
  }

  async function remove(id: string) {
    try {
      await ok(client.DELETE('/conversations/{id}', { params: { path: { id } } }));
    } catch {
      /* forgotten locally either way */
    }
    setConvs((cs) => cs.filter((c) => c.id !== id));
    if (current === id) newChat();
  }

  function newChat() {
    abort.current?.abort();
    setCurrent(undefined);
    setTurns([]);
    setGraph(undefined);
  }

  return (
    <div class="chat">
      <aside class="convs" aria-label={t.conversations}>
        <button type="button" onClick={newChat}>
          + {t.newChat}
        </button>
        <ul>
          {convs.map((c) => (
            <li key={c.id} class={c.id === current ? 'current' : ''}>
              <button type="button" class="link title" onClick={() => open(c.id)}>
                {c.title}
              </button>
              <button
                type="button"
                class="icon"
                aria-label={`${t.rename}: ${c.title}`}
                onClick={() => {
                  const title = prompt(t.rename, c.title);
                  if (title) setConvs((cs) => cs.map((x) => (x.id === c.id ? { ...x, title } : x)));
                }}
              >
                ✎
              </button>
              <button type="button" class="icon" aria-label={`${t.delete}: ${c.title}`} onClick={() => remove(c.id)}>
                ✕
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <section class="thread" aria-live="polite">
        {turns.length === 0 && <p class="muted">{t.empty}</p>}
        {turns.map((turn, i) => (
          <TurnView
            key={i}
            t={t}
            turn={turn}
            docIds={docIds}
            onDecide={(ok) => decide(i, ok)}
            onCite={(id) => setFocus({ id })}
            onCitation={(c) => {
              if (c.kind === 'entity') void citeEntity(c, turn.state.graph);
              else onOpenDocument({ document: c.document, chunk: c.chunk, query: turn.question });
            }}
          />
        ))}
        {citeError && (
          <p class="error" role="alert">
            {citeError}
          </p>
        )}
        {graph && graph.nodes.length > 0 && <GraphPanel t={t} data={graph} dark={dark} focus={focus} />}
        <div ref={bottom} />
      </section>
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void send(input);
        }}
      >
        <textarea
          aria-label={t.ask}
          placeholder={t.ask}
          value={input}
          rows={2}
          onInput={(e) => setInput(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void send(input);
            }
          }}
        />
        {busy ? (
          <button type="button" class="stop" onClick={() => abort.current?.abort()}>
            {t.stop}
          </button>
        ) : (
          <button type="submit">{t.send}</button>
        )}
      </form>
    </div>
  );
}

function Markdown({ text, ids, onCite }: { text: string; ids: Map<string, string>; onCite: (id: string) => void }) {
  const html = useMemo(() => renderMarkdown(text, ids), [text, ids]);
  return (
    <div
      class="md"
      onClick={(e) => {
        const a = (e.target as HTMLElement).closest?.('a');
        const href = a?.getAttribute('href') ?? '';
        if (href.startsWith('#node:')) {
          e.preventDefault();
          onCite(href.slice('#node:'.length));
        }
      }}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

function TurnView({
  t,
  turn,
  docIds,
  onDecide,
  onCite,
  onCitation,
}: {
  t: Strings;
  turn: Turn;
  docIds: ReadonlySet<string>;
  onDecide: (ok: boolean) => void;
  onCite: (id: string) => void;
  onCitation: (c: Citation) => void;
}) {
  const s = turn.state;
  const citations = useMemo(() => resolveCitations(s.sources, s.graph?.nodes ?? [], docIds), [s.sources, s.graph, docIds]);
  const ids = useMemo(() => {
    const m = new Map<string, string>();
    for (const n of s.graph?.nodes ?? []) {
      m.set(n.id, n.id);
      if (n.caption) m.set(n.caption, n.id);
      if (typeof n.properties?.id === 'string' && !m.has(n.properties.id)) m.set(n.properties.id, n.id);
    }
    return m;
  }, [s.graph]);
  return (
    <article class="turn">
      {turn.question && <p class="question">{turn.question}</p>}
      {s.steps.length > 0 && (
        <details class="steps" open={s.status === 'streaming'}>
          <summary>
            {t.steps} ({s.steps.length})
          </summary>
          <ol>
            {s.steps.map((st) => (
              <li key={st.key} class={`step ${st.status}`}>
                <span class="icon" aria-hidden="true">
                  {st.status === 'running' ? '○' : st.status === 'ok' ? '✔' : '✖'}
                </span>{' '}
                <span class="sr">{t[st.status === 'ok' ? 'succeeded' : st.status === 'failed' ? 'failed' : 'running']}</span>
                <strong>{st.kind === 'tool' ? `⚙ ${st.title}` : st.kind === 'route' ? `➜ ${st.title}` : st.title}</strong>
                {st.detail && <span class="muted"> — {st.detail}</span>}
                {st.endedAt !== undefined && <span class="muted"> ({Math.round(st.endedAt - st.startedAt)} ms)</span>}
                {st.kind === 'tool' && (
                  <details>
                    <summary>{st.summary || '…'}</summary>
                    <pre>{JSON.stringify(st.arguments ?? {}, null, 2)}</pre>
                  </details>
                )}
              </li>
            ))}
          </ol>
        </details>
      )}
      {s.plan && <PlanCard t={t} turn={turn} onDecide={onDecide} />}
      {s.text && <Markdown text={s.text} ids={ids} onCite={onCite} />}
      {citations.length > 0 && <Citations t={t} citations={citations} onOpen={onCitation} />}
      {s.status === 'streaming' && !s.text && <p class="muted typing">…</p>}
      {s.status === 'streaming' && (turn.reconnecting ?? 0) > 0 && (
        <p class="muted" role="status">
          {t.reconnecting} ({turn.reconnecting})
        </p>
      )}
      {s.error && (
        <p class="error" role="alert">
          {errorText(t, 0, s.error.code, s.error.message)}
        </p>
      )}
      {turn.apiError && (
        <p class="error" role="alert">
          {turn.apiError}
        </p>
      )}
      {s.status === 'stopped' && <p class="muted">{t.stopped}</p>}
      {s.status === 'incomplete' && !turn.apiError && (
        <p class="error" role="alert">
          {t.incomplete}
        </p>
      )}
      {s.warnings.length > 0 && (
        <details class="warnings">
          <summary>
            {t.warnings} ({s.warnings.length})
          </summary>
          <ul>
            {s.warnings.map((w, i) => (
              <li key={i}>{w}</li>
            ))}
          </ul>
        </details>
      )}
    </article>
  );
}

/** The answer's sources as a list of buttons: an entity opens in the graph view, a
 * document (or passage) on the Documents page. Text only: nothing here is parsed as HTML. */
function Citations({ t, citations, onOpen }: { t: Strings; citations: Citation[]; onOpen: (c: Citation) => void }) {
  // A group, not a landmark: every answer has one.
  const title = useId();
  return (
    <div class="citations" role="group" aria-labelledby={title}>
      <p class="cite-title" id={title}>
        {t.sources}
      </p>
      <ol>
        {citations.map((c) => {
          const kind = c.kind === 'entity' ? t.entityKind : c.chunk ? t.passageKind : t.documentKind;
          const name = c.label !== c.reference ? `${c.label} (${c.reference})` : c.reference;
          return (
            <li key={c.reference}>
              <button
                type="button"
                class="link"
                aria-label={`${c.kind === 'entity' ? t.openInGraph : t.openDocument}: ${name}`}
                onClick={() => onOpen(c)}
              >
                {c.label}
              </button>{' '}
              {c.label !== c.reference && <code>{c.reference}</code>} <span class="muted">({kind})</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

function PlanCard({ t, turn, onDecide }: { t: Strings; turn: Turn; onDecide: (ok: boolean) => void }) {
  const s = turn.state;
  const plan = s.plan;
  if (!plan) return null;
  const p = s.progress;
  const pending = p ? Math.max(0, p.total - p.completed) : plan.target_count;
  return (
    <div class="card plan" role="region" aria-label={t.plan}>
      <h3>
        {t.plan}: {plan.entity_type}.{plan.action_name} — {plan.target_count} {t.targets}
      </h3>
      <p class="ids">
        {plan.targets.slice(0, 30).map((x) => x.entity_id).join(', ')}
        {plan.targets.length > 30 ? ` … (+${plan.targets.length - 30})` : ''}
      </p>
      {plan.parameters !== null && typeof plan.parameters === 'object' && Object.keys(plan.parameters).length > 0 && (
        <p>
          {t.parameters}: <code>{JSON.stringify(plan.parameters)}</code>
        </p>
      )}
      {s.approval && !turn.decided && (
        <div class="approval">
          <p>
            <strong>{t.approvalNeeded}</strong>: {s.approval.reason}
          </p>
          <button type="button" class="primary" disabled={turn.approving} onClick={() => onDecide(true)}>
            {t.approve}
          </button>{' '}
          <button type="button" disabled={turn.approving} onClick={() => onDecide(false)}>
            {t.reject}
          </button>
        </div>
      )}
      {turn.decided && <p class="muted">{turn.decided === 'approved' ? `✔ ${t.approve}` : `✖ ${t.reject}`}</p>}
      {(turn.approving || (p && (p.completed > 0 || s.report))) && p && (
        <div class="progress">
          <progress
            max={p.total || 1}
            value={turn.approving ? undefined : p.completed}
            aria-label={`${p.completed} / ${p.total}`}
          />
          <p>
            <span class="ok">
              {p.succeeded} {t.succeeded}
            </span>{' '}
            ·{' '}
            <span class="bad">
              {p.failed} {t.failed}
            </span>{' '}
            {p.unknown > 0 && (
              <>
                · <span class="warn">{p.unknown} {t.unknown}</span>{' '}
              </>
            )}
            · {pending} {t.pending}
          </p>
        </div>
      )}
      {s.failures.length > 0 && (
        <table>
          <caption>{t.failed}</caption>
          <thead>
            <tr>
              <th>{t.entity}</th>
              <th>{t.reason}</th>
            </tr>
          </thead>
          <tbody>
            {s.failures.slice(0, 200).map((f, i) => (
              <tr key={i}>
                <td>{f.entity_id}</td>
                <td>{f.error || f.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {s.report && <p class="muted">{t.report} ✔</p>}
    </div>
  );
}

function GraphPanel({ t, data, dark, focus }: { t: Strings; data: GraphData; dark: boolean; focus?: { id: string } }) {
  const box = useRef<HTMLDivElement>(null);
  const section = useRef<HTMLElement>(null);
  const handle = useRef<import('./graphview').GraphHandle | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [selected, setSelected] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    import('./graphview').then(({ mountGraph }) => {
      if (!live || !box.current) return;
      handle.current = mountGraph(box.current, data, dark, setSelected);
      setLoading(false);
    });
    return () => {
      live = false;
      handle.current?.destroy();
      handle.current = undefined;
    };
  }, [data, dark]);
  useEffect(() => {
    if (!focus) return;
    setSelected(focus.id);
    handle.current?.select(focus.id);
    section.current?.scrollIntoView?.({ block: 'nearest' });
  }, [focus, loading]);
  const node = data.nodes.find((n) => n.id === selected);
  const neighbours = selected
    ? data.edges.filter((e) => e.source === selected || e.target === selected).map((e) => {
          const other = e.source === selected ? e.target : e.source;
          const name = data.nodes.find((n) => n.id === other)?.caption || other;
          return e.source === selected ? `${e.type} → ${name}` : `${name} → ${e.type}`;
        })
    : [];
  return (
    <section class="card graph" aria-label={t.graph} ref={section}>
      <h3>
        {t.graph} ({data.nodes.length} / {data.edges.length})
      </h3>
      {loading && <p class="muted">{t.loadingGraph}</p>}
      <div class="cy" ref={box} role="img" aria-label={`${t.graph}: ${data.nodes.length}`} />
      {node && (
        <div class="node-info">
          <strong>{node.caption}</strong> <code>{node.id}</code> <em>{node.labels.join(', ')}</em>
          {node.properties && <pre>{JSON.stringify(node.properties, null, 2)}</pre>}
          <ul>
            {neighbours.slice(0, 50).map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

// ---------------------------------------------------------------- action log

function ActionLog({ t }: { t: Strings }) {
  const [entries, setEntries] = useState<Record<string, unknown>[]>([]);
  const [error, setError] = useState('');
  const [undone, setUndone] = useState<Set<string>>(new Set());
  const load = async () => {
    try {
      const r = await ok(client.GET('/actions/log', { params: { query: { limit: 50 } } }));
      const list = r.entries;
      setEntries(Array.isArray(list) ? (list as Record<string, unknown>[]) : []);
      setError('');
    } catch (e) {
      setError(describe(t, e));
    }
  };
  useEffect(() => void load(), []);
  async function undo(id: string) {
    try {
      await ok(client.POST('/actions/log/{log_id}/undo', { params: { path: { log_id: id } }, body: {} }));
      setUndone((u) => new Set(u).add(id));
      setError('');
    } catch (e) {
      setError(describe(t, e));
    }
  }
  return (
    <div class="page">
      <h2>
        {t.actionLog}{' '}
        <button type="button" onClick={load}>
          {t.refresh}
        </button>
      </h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {entries.length === 0 && !error && <p class="muted">{t.noActions}</p>}
      <table class="log">
        <thead>
          <tr>
            <th>{t.when}</th>
            <th>{t.action}</th>
            <th>{t.entity}</th>
            <th>{t.changes}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => {
            const id = String(e.id ?? e.log_id ?? '');
            const isUndone = undone.has(id) || (e.undone_by !== null && e.undone_by !== undefined);
            return (
              <tr key={id}>
                <td>{String(e.at ?? '').replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</td>
                <td>{`${String(e.entity_type ?? '')}.${String(e.action_name ?? '')}`}</td>
                <td>{String(e.entity_id ?? '')}</td>
                <td>
                  <ul class="changes">
                    {(Array.isArray(e.changes) ? (e.changes as Record<string, unknown>[]) : []).map((c, i) => (
                      <li key={i}>
                        <code>
                          {`${String(c.entity_id ?? '')}.${String(c.property ?? '')}: ${JSON.stringify(c.before ?? null)} → ${JSON.stringify(c.after ?? null)}`}
                        </code>
                      </li>
                    ))}
                  </ul>
                </td>
                <td>
                  {isUndone ? (
                    <span class="muted">{t.undone}</span>
                  ) : (
                    <button type="button" aria-label={`${t.undo} ${id}`} onClick={() => undo(id)}>
                      {t.undo}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

// ---------------------------------------------------------------- documents

function Documents({ t, focus }: { t: Strings; focus?: DocFocus }) {
  const [docs, setDocs] = useState<Record<string, unknown>[]>([]);
  const [loaded, setLoaded] = useState(false);
  // The cited passage: its text when found by a search within its document, null when not.
  const [passage, setPassage] = useState<{ chunk: string; text: string | null } | undefined>();
  const cited = useRef<HTMLLIElement>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState('');
  const [notes, setNotes] = useState<string[]>([]);
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<Record<string, unknown>[] | undefined>();
  const [legs, setLegs] = useState('');
  const load = async () => {
    try {
      const r = await ok(client.GET('/documents'));
      setDocs(Array.isArray(r.documents) ? (r.documents as Record<string, unknown>[]) : []);
      setError('');
    } catch (e) {
      setError(describe(t, e));
    } finally {
      setLoaded(true);
    }
  };
  useEffect(() => void load(), []);
  // A cited document: highlighted, scrolled to and given the keyboard focus; a cited
  // passage is looked up by searching its document for the question it answered.
  const focusedId = focus?.document;
  const present = loaded && focusedId !== undefined && docs.some((d) => String(d.id ?? '') === focusedId);
  useEffect(() => {
    if (!present) return;
    cited.current?.scrollIntoView?.({ block: 'nearest' });
    cited.current?.focus();
  }, [focus, present]);
  useEffect(() => {
    setPassage(undefined);
    const chunk = focus?.chunk;
    if (!focus || !chunk) return;
    let live = true;
    ok(client.POST('/search', { body: { query: focus.query.trim() || focus.document, top_k: 20, document_ids: [focus.document] } }))
      .then((r) => {
        const hit = (Array.isArray(r.hits) ? (r.hits as Record<string, unknown>[]) : []).find((h) => h.chunk_id === chunk);
        if (live) setPassage({ chunk, text: hit && typeof hit.text === 'string' ? hit.text : null });
      })
      .catch(() => live && setPassage({ chunk, text: null }));
    return () => {
      live = false;
    };
  }, [focus]);
  async function upload(file: File) {
    setBusy(`${t.upload}: ${file.name}…`);
    try {
      const text = await file.text();
      const id = file.name.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 60) || 'document';
      const r = await ok(
        client.POST('/documents', {
          body: {
            id,
            title: file.name,
            content_type: /\.(md|markdown)$/i.test(file.name) ? 'markdown' : 'text',
            text,
          },
        }),
      );
      setError('');
      setNotes([
        `${file.name}: ${String(r.chunks ?? '?')} chunks${r.replaced ? ' (replaced)' : ''}`,
        ...(Array.isArray(r.warnings) ? r.warnings.map(String) : []),
      ]);
      await load();
    } catch (e) {
      setError(describe(t, e));
    } finally {
      setBusy('');
    }
  }
  async function search(e: Event) {
    e.preventDefault();
    if (!query.trim()) return;
    try {
      const r = await ok(client.POST('/search', { body: { query, top_k: 5 } }));
      setHits(Array.isArray(r.hits) ? (r.hits as Record<string, unknown>[]) : []);
      setLegs(`${(Array.isArray(r.legs) ? r.legs : []).join(' + ')}${Array.isArray(r.warnings) && r.warnings.length ? ` — ${r.warnings.join('; ')}` : ''}`);
      setError('');
    } catch (err) {
      setError(describe(t, err));
    }
  }
  return (
    <div class="page">
      <h2>{t.documents}</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <label
        class="drop"
        onDragOver={(e) => e.preventDefault()}
        onDrop={(e) => {
          e.preventDefault();
          const f = e.dataTransfer?.files?.[0];
          if (f) void upload(f);
        }}
      >
        {t.dropHere}
        <input
          type="file"
          accept=".txt,.md,.markdown,text/plain,text/markdown"
          aria-label={t.upload}
          onChange={(e) => {
            const f = e.currentTarget.files?.[0];
            if (f) void upload(f);
          }}
        />
      </label>
      {busy && (
        <p class="muted" role="status">
          <progress aria-label={busy} /> {busy}
        </p>
      )}
      {notes.length > 0 && (
        <ul class="muted" role="status">
          {notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
      {loaded && focusedId !== undefined && !present && (
        <p class="error" role="alert">
          {t.documentMissing}: {focusedId}
        </p>
      )}
      <ul class="docs">
        {docs.length === 0 && <li class="muted">{t.noDocs}</li>}
        {docs.map((d) => {
          const id = String(d.id ?? '');
          const isCited = id === focusedId;
          return (
            <li
              key={id}
              class={isCited ? 'cited' : undefined}
              ref={isCited ? cited : undefined}
              tabIndex={isCited ? -1 : undefined}
              aria-current={isCited ? 'true' : undefined}
            >
              <strong>{String(d.title ?? id)}</strong> <code>{id}</code>{' '}
              <span class="muted">{d.chunks !== undefined ? `${String(d.chunks)} chunks · ${String(d.ingested_at ?? '')}` : ''}</span>{' '}
              <button
                type="button"
                aria-label={`${t.delete} ${id}`}
                onClick={async () => {
                  try {
                    await ok(client.DELETE('/documents/{id}', { params: { path: { id } } }));
                    await load();
                  } catch (e) {
                    setError(describe(t, e));
                  }
                }}
              >
                {t.delete}
              </button>
              {isCited && passage && (
                <div class="passage" role="group" aria-label={`${t.citedPassage} ${passage.chunk}`}>
                  <p class="muted">
                    {t.citedPassage} <code>{passage.chunk}</code>
                  </p>
                  <p class="snippet">{passage.text ?? t.passageMissing}</p>
                </div>
              )}
            </li>
          );
        })}
      </ul>
      <form class="search" onSubmit={search} role="search">
        <input aria-label={t.search} placeholder={t.searchDocs} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <button type="submit">{t.search}</button>
      </form>
      {hits && legs && <p class="muted legs">{legs}</p>}
      {hits && (
        <ol class="hits">
          {hits.map((h, i) => (
            <li key={i}>
              <p>
                <strong>{String(h.document_id ?? '')}</strong> <code>{String(h.chunk_id ?? '')}</code>{' '}
                <span class="muted">
                  {t.score} {Number(h.fused_score ?? 0).toFixed(4)} · vector{' '}
                  {h.vector_rank == null ? '–' : `#${String(h.vector_rank)} (${Number(h.vector_score ?? 0).toFixed(3)})`} · BM25{' '}
                  {h.bm25_rank == null ? '–' : `#${String(h.bm25_rank)} (${Number(h.bm25_score ?? 0).toFixed(3)})`}
                </span>
              </p>
              <p class="snippet">{String(h.text ?? '').slice(0, 400)}</p>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

// ---------------------------------------------------------------- status

function Status({ t }: { t: Strings }) {
  const [health, setHealth] = useState<Record<string, unknown> | undefined>();
  const [error, setError] = useState('');
  const load = async () => {
    // /health answers 503 with the same body when something is down.
    try {
      setHealth(await healthReport());
      setError('');
    } catch (e) {
      setError(describe(t, e));
    }
  };
  useEffect(() => void load(), []);
  const ok = health?.status === 'ok';
  type Row = [string, string, boolean];
  const rows: Row[] = [];
  if (health) {
    for (const c of Array.isArray(health.components) ? (health.components as Record<string, unknown>[]) : []) {
      const checks = Array.isArray(c.checks) ? (c.checks as Record<string, unknown>[]) : [];
      if (checks.length === 0) rows.push([String(c.name ?? ''), c.ready ? 'ready' : 'not ready', c.ready === true]);
      for (const ch of checks) rows.push([`${String(c.name ?? '')} · ${String(ch.name ?? '')}`, String(ch.detail ?? ''), ch.ok === true]);
    }
    const kv = health.kv as Record<string, unknown> | undefined;
    if (kv) rows.push([`key-value · ${String(kv.store ?? '')}`, kv.ok ? 'round trip ok' : String(kv.error ?? 'failed'), kv.ok === true]);
  }
  const problems = Array.isArray(health?.problems) ? (health?.problems as unknown[]).map(String) : [];
  return (
    <div class="page">
      <h2>
        {t.status}{' '}
        <button type="button" onClick={load}>
          {t.refresh}
        </button>
      </h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {health && (
        <>
          <p class={ok ? 'ok big' : 'bad big'}>{ok ? `✔ ${t.healthy}` : `✖ ${t.unhealthy}`}</p>
          <p>
            {t.version}: {String(health.version ?? '')}
          </p>
          {problems.length > 0 && (
            <ul class="error" role="alert">
              {problems.map((p, i) => (
                <li key={i}>{p}</li>
              ))}
            </ul>
          )}
          <table>
            <tbody>
              {rows.map(([k, v, good]) => (
                <tr key={k}>
                  <th scope="row">{k}</th>
                  <td class={good ? 'ok' : 'bad'}>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
