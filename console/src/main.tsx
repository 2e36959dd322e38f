import { createRoot } from 'react-dom/client';
import { AdminView } from './admin';
import { DocumentView } from './document';
import { useRoute } from './route';
import { SearchView } from './search';
import './styles.css';

function App() {
  const route = useRoute();
  const tab = (view: string, label: string, to: string) => (
    <a href={to} aria-current={route.view === view ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <header className="top">
        <h1>DHR console</h1>
        <nav aria-label="Views">
          {tab('search', 'Search', '#/search')}
          {tab('admin', 'Admin', '#/admin')}
          <a href="/graphiql">GraphiQL</a>
        </nav>
      </header>
      <main>
        {route.view === 'document' ? <DocumentView key={route.id} route={route} /> : route.view === 'admin' ? <AdminView /> : <SearchView route={route} />}
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
