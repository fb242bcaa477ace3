// The dashboard works without this file; it only adds a keyboard shortcut:
// "/" focuses the page's search field (as on many sites), unless one is typing already.
document.addEventListener("keydown", function (event) {
  var target = event.target;
  var typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  if (event.key !== "/" || typing || event.ctrlKey || event.metaKey || event.altKey) return;
  var search = document.querySelector('input[type="search"]');
  if (search) { event.preventDefault(); search.focus(); search.select(); }
});
