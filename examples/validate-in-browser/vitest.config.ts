import { packageProject } from '../../vitest.shared.ts';

export default packageProject('validate-in-browser');
