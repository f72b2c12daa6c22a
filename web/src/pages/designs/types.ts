/** The shapes of the designs API (`/designs…`) and of the shipped templates, as the Designs pages use them. */
export type { DesignTemplate, SavedDesign as Design } from '../../lib/designs';
