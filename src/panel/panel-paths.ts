// Addresses of panel pages that code outside the panel links to (the emails about incidents), kept
// here so that linking to a page does not import the page (and through it the whole app).
export const SERVICE_PAGE_PATH = '/panel/services';
export const OVERVIEW_PATH = '/panel';
