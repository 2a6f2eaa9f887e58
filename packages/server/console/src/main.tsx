// The retryd web console: a few pages over the service's own API, chosen by the URL's hash (#/tasks/…).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, storeKey, storedKey, whenUnauthorized } from './api.js';
import { DeadLettersPage } from './pages/dead-letters.js';
import { NotFoundPage } from './pages/not-found.js';
import { OverviewPage } from './pages/overview.js';
import { PoliciesPage, PolicyPage } from './pages/policies.js';
import { TargetPage, TargetsPage } from './pages/targets.js';
import { TaskPage } from './pages/task.js';
import { TasksPage } from './pages/tasks.js';

const SECTIONS = [
  ['overview', 'Overview'],
  ['tasks', 'Tasks'],
  ['dead-letters', 'Dead letters'],
  ['policies', 'Policies'],
  ['targets', 'Targets'],
] as const;

/** The route in the hash, split: `#/tasks/abc` → `['tasks', 'abc']`. */
function currentRoute(): string[] {
  const parts = (location.hash.replace(/^#\/?/, '').split('?')[0] ?? '').split('/').filter((part) => part !== '');
  return parts.length === 0 ? ['overview'] : parts.map(decodeURIComponent);
}

function Page({ route }: { route: string[] }) {
  const [section, id] = route;
  switch (section) {
    case 'tasks':
      return id === undefined ? <TasksPage /> : <TaskPage taskId={id} />;
    case 'policies':
      return id === undefined ? <PoliciesPage /> : <PolicyPage policyId={id} />;
    case 'targets':
      return id === undefined ? <TargetsPage /> : <TargetPage targetKey={id} />;
    case 'overview':
      return route.length === 1 ? <OverviewPage /> : <NotFoundPage route={route} />;
    case 'dead-letters':
      return <DeadLettersPage />;
    default:
      return <NotFoundPage route={route} />;
  }
}

/** Asks for an API key; the key is checked with a call the key's scope allows (a list of policies). */
function KeyForm({ onKey }: { onKey: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    storeKey(key.trim());
    try {
      await api('GET', '/retry-policies?limit=1');
      onKey();
    } catch (failure) {
      storeKey(null);
      setError(failure instanceof ApiError ? failure.message : String(failure));
    }
  };
  return (
    <main id="main" class="key-form">
      <h1>API key</h1>
      <p>This service needs an API key. It is kept in this tab only and sent with each call the console makes.</p>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          placeholder="rtd_…"
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
          aria-invalid={error !== undefined}
          aria-describedby={error === undefined ? undefined : 'api-key-error'}
          required
        />
        {error !== undefined && (
          <p id="api-key-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary">
          Use this key
        </button>
      </form>
    </main>
  );
}

function App() {
  const [route, setRoute] = useState(currentRoute);
  const [needsKey, setNeedsKey] = useState(false);
  useEffect(() => {
    const follow = () => setRoute(currentRoute());
    addEventListener('hashchange', follow);
    whenUnauthorized(() => setNeedsKey(true));
    return () => removeEventListener('hashchange', follow);
  }, []);
  const [section] = route;
  return (
    <>
      <a class="skip" href="#main" onClick={(event) => {
        event.preventDefault();
        document.getElementById('main')?.focus();
      }}>
        Skip to content
      </a>
      <header>
        <span class="brand">retryd</span>
        <nav aria-label="Console">
          <ul>
            {SECTIONS.map(([path, label]) => (
              <li key={path}>
                <a href={`#/${path}`} aria-current={section === path ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {storedKey() !== null && !needsKey && (
          <button type="button" class="link" onClick={() => {
            storeKey(null);
            setNeedsKey(true);
          }}>
            Forget key
          </button>
        )}
      </header>
      {needsKey ? (
        <KeyForm onKey={() => setNeedsKey(false)} />
      ) : (
        <main id="main" tabIndex={-1}>
          <Page key={location.hash} route={route} />
        </main>
      )}
    </>
  );
}

render(<App />, document.getElementById('app')!);
