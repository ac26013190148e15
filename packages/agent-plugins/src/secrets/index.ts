export { SECRET_FINDING_CODES } from './codes.js';
