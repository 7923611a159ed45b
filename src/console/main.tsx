/** The bundle's entry (scripts/build-console.mjs): renders the console into <div id="app">. */
import { render } from 'preact';
import { App } from './app.js';

render(<App />, document.getElementById('app')!);
