// placeholder: being written now; the real handler replaces this file.
export const handler = async () => undefined;
