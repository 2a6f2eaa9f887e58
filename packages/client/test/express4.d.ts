// `express4` is Express 4.21 installed under an npm alias (a devDependency), so that the middleware is tested on
// Express 4 and 5 side by side. It ships no types and @types/express describes 5; what the tests call of it (the app,
// `json()`, `use`, `post`, `listen`, `req.query`, `res.status().json()`) is the same in both.
declare module 'express4' {
  import express from 'express';
  export default express;
}
