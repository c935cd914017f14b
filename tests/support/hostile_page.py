"""A page that tries to make the browser reach another address in every way a page can."""

from __future__ import annotations


def hostile_page(there: str) -> bytes:
    """A page whose subresources, scripts' requests, socket, popup and iframe navigation all
    aim at ``there``."""
    ws = there.replace("http://", "ws://")
    return f"""<!doctype html><html><head>
<link rel="stylesheet" href="{there}style.css"><script src="{there}script.js"></script>
<link rel="preconnect" href="{there}"><link rel="prefetch" href="{there}prefetch">
</head><body><p id="ok">still here</p>
<img src="{there}image.png"><iframe id="frame" src="{there}frame"></iframe>
<video src="{there}video.mp4"></video>
<script>
fetch("{there}fetch").catch(() => {{}});
const xhr = new XMLHttpRequest(); xhr.open("GET", "{there}xhr"); xhr.send();
navigator.sendBeacon("{there}beacon", "x");
try {{ new WebSocket("{ws}socket"); }} catch (e) {{}}
window.open("{there}popup");
setTimeout(() => {{ document.getElementById("frame").src = "{there}frame2"; }}, 100);
const late = document.createElement("p"); late.id = "built"; late.textContent = "built";
document.body.appendChild(late);
</script></body></html>""".encode()
