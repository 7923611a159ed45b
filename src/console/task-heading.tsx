/** The heading of a page about one task: its title (focused on arrival) and the task id with a link to its other view. */
export function TaskHeading({ title, id, link }: { title: string; id: string; link: { href: string; text: string } }) {
  return (
    <>
      <h1 id="page-title" tabIndex={-1}>
        {title}
      </h1>
      <p class="task-id">
        <code>{id}</code> · <a href={link.href}>{link.text}</a>
      </p>
    </>
  );
}
