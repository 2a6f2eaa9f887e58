// A route the console does not have (a mistyped or outdated link): said plainly, with the way back.
import { PageTitle } from '../ui.js';

export function NotFoundPage({ route }: { route: string[] }) {
  return (
    <>
      <PageTitle>Not found</PageTitle>
      <p>
        The console has no page <span class="mono wrap">#/{route.map(encodeURIComponent).join('/')}</span>.
      </p>
      <p>
        <a href="#/overview">Go to the overview</a>
      </p>
    </>
  );
}
