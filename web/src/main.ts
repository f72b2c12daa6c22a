import { mount } from 'svelte';
import App from './App.svelte';
import { startRouter } from './lib/router.svelte';
import './app.css';

startRouter();
mount(App, { target: document.getElementById('app')! });
