package approval

// pageHTML is the console page: rendered on the server so it is complete in
// one round trip, then kept current by a small script that polls
// api/state every 400 ms and rebuilds the lists with textContent (no
// markup from data). Without JavaScript the forms still post and redirect.
const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{{.CSRF}}">
<title>onellm-mcp approvals</title>
<style nonce="{{.Nonce}}">
body{font:16px/1.4 system-ui,sans-serif;margin:0 auto;max-width:46rem;padding:.75rem;color:#111;background:#fafafa}
h1{font-size:1.25rem}h2{font-size:1.05rem;margin-top:1.5rem}
.card{background:#fff;border:1px solid #ccc;border-radius:.5rem;padding:.75rem;margin:.5rem 0;overflow-wrap:anywhere}
.meta{color:#555;font-size:.875rem}
.what{font-family:ui-monospace,monospace;font-size:.9rem}
form{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:.5rem}
button{font-size:1rem;padding:.5rem .9rem;border-radius:.4rem;border:1px solid #888;background:#eee;flex:1 1 8rem}
button.allow{background:#d8f0d8}button.deny{background:#f6d6d6}
input[type=text]{font-size:1rem;padding:.45rem;flex:1 1 100%}
.empty{color:#666}
.ctx{font-size:.875rem;color:#333}.ctx code{font-family:ui-monospace,monospace}
.risk-critical{border:3px solid #b00000;background:#fff0f0}.risk-critical .lvl{color:#fff;background:#b00000}
.risk-high{border:2px solid #c25e00;background:#fff7ee}.risk-high .lvl{color:#fff;background:#c25e00}
.lvl{font-weight:700;padding:0 .35rem;border-radius:.25rem;text-transform:uppercase;font-size:.8rem;background:#ddd}
</style></head><body>
<h1>onellm-mcp: approvals</h1>
<p class="meta">Each pending call waits for an answer here or in the client; the first answer decides.</p>
<h2>Pending</h2>
<div id="pending">
{{- range .Pending}}
<div class="card{{if .Level}} risk-{{.Level}}{{end}}" data-id="{{.ID}}">
 <div><b>{{.Tool}}</b>{{if .Level}} <span class="lvl">{{.Level}} risk</span>{{end}} <span class="meta">times out in {{.SecondsLeft}}s</span></div>
 {{- if .Server}}<div class="meta srv">server {{.Server}}</div>{{end}}
 {{- if .Awaiting}}<div class="meta sent">{{.Awaiting}}</div>{{end}}
 {{- if eq .Kind "approval"}}
 <div class="ctx">{{with .Context}}{{if .Line}}<div>call <code>{{.Line}}</code></div>{{end}}{{if .Cwd}}<div>in {{.Cwd}}</div>{{end}}<div>from {{.Client}}, workspace {{.Workspace}}</div>{{end}}</div>
 {{- range .Items}}<div class="what">{{.What}}</div><div class="meta">rule {{.Rule}}, risk {{.Risk}}, "for session" holds {{.Session}}</div>{{end}}
 <form method="post" action="api/decide"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}">
  <button class="allow" name="decision" value="allow_once">Allow once</button>
  {{- if .Session}}<button class="allow" name="decision" value="allow_for_session">Allow for session</button>{{end}}
  <button class="deny" name="decision" value="deny">Deny</button></form>
 {{- else}}
 <div>{{.Question}}</div>
 <form method="post" action="api/decide"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}">
  {{- if .Choices}}{{range .Choices}}<button name="answer" value="{{.}}">{{.}}</button>{{end}}<input type="hidden" name="action" value="accept">
  {{- else}}<input type="text" name="answer" value="{{.Default}}" aria-label="Answer"><button class="allow" name="action" value="accept">Answer</button>{{end}}
 </form>
 <form method="post" action="api/decide"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button class="deny" name="action" value="decline">Decline</button></form>
 {{- end}}
</div>
{{- else}}<p class="empty">Nothing is waiting.</p>{{end}}
</div>
<h2>Recent decisions</h2>
<div id="recent">
{{- range .Recent}}<div class="card"><b>{{.Tool}}</b> {{.Outcome}}{{if .Channel}} <span class="meta">via {{.Channel}}</span>{{end}}<div class="what">{{.What}}</div><div class="meta">{{.Time.Format "15:04:05"}}</div></div>
{{- else}}<p class="empty">None yet.</p>{{end}}
</div>
<script nonce="{{.Nonce}}">
(function(){
"use strict";
var csrf=document.querySelector('meta[name=csrf]').content,version={{.Version}};
// The page of one ask (askpage.go) finds this login here, per origin; an ask
// opened before logging in is shown once logged in.
var login=/^\/s\/([A-Za-z0-9_-]{22})\//.exec(location.pathname);
try{if(login){localStorage.setItem('onellm_console_sid',login[1]);
  var next=JSON.parse(localStorage.getItem('onellm_console_next')||'null');localStorage.removeItem('onellm_console_next');
  if(next&&/^[A-Za-z0-9_-]{22}$/.test(next.id)&&Date.now()-next.at<600000){location.replace('ask/'+next.id);return}}}catch(e){}
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e}
function post(id,fields){
  var body=new URLSearchParams({id:id,csrf:csrf});for(var k in fields)body.set(k,fields[k]);
  fetch('api/decide',{method:'POST',headers:{'X-CSRF-Token':csrf},body:body,credentials:'same-origin'})
   .then(function(r){return r.json()}).then(function(j){if(!j.ok)alert(j.message)}).finally(refresh);
}
function btn(text,cls,fn){var b=el('button',cls,text);b.type='button';b.onclick=fn;return b}
function render(s){
  var p=document.getElementById('pending');p.replaceChildren();
  if(!s.pending.length)p.append(el('p','empty','Nothing is waiting.'));
  s.pending.forEach(function(it){
    var c=el('div','card'+(it.level?' risk-'+it.level:'')),h=el('div');h.append(el('b',null,it.tool));
    if(it.level)h.append(' ',el('span','lvl',it.level+' risk'));
    h.append(' ',el('span','meta','times out in '+it.seconds_left+'s'));c.append(h);
    if(it.server)c.append(el('div','meta srv','server '+it.server));
    if(it.awaiting)c.append(el('div','meta sent',it.awaiting));
    var f=el('form');
    if(it.kind==='approval'){
      var x0=it.context||{},cx=el('div','ctx');
      if(x0.line){var d=el('div',null,'call ');d.append(el('code',null,x0.line));cx.append(d)}
      if(x0.cwd)cx.append(el('div',null,'in '+x0.cwd));
      cx.append(el('div',null,'from '+x0.client+', workspace '+x0.workspace));c.append(cx);
      (it.items||[]).forEach(function(x){c.append(el('div','what',x.what),el('div','meta','rule '+x.rule+', risk '+x.risk+', "for session" holds '+x.session))});
      f.append(btn('Allow once','allow',function(){post(it.id,{decision:'allow_once'})}));
      if(it.session)f.append(btn('Allow for session','allow',function(){post(it.id,{decision:'allow_for_session'})}));
      f.append(btn('Deny','deny',function(){post(it.id,{decision:'deny'})}));
    }else{
      c.append(el('div',null,it.question));
      if(it.choices&&it.choices.length){it.choices.forEach(function(ch){f.append(btn(ch,null,function(){post(it.id,{action:'accept',answer:ch})}))})}
      else{var i=el('input');i.type='text';i.value=it.default||'';i.setAttribute('aria-label','Answer');f.append(i,btn('Answer','allow',function(){post(it.id,{action:'accept',answer:i.value})}))}
      f.append(btn('Decline','deny',function(){post(it.id,{action:'decline'})}));
    }
    c.append(f);p.append(c);
  });
  var r=document.getElementById('recent');r.replaceChildren();
  if(!s.recent.length)r.append(el('p','empty','None yet.'));
  s.recent.forEach(function(x){var c=el('div','card');c.append(el('b',null,x.tool),' '+x.outcome);if(x.channel)c.append(' ',el('span','meta','via '+x.channel));
    c.append(el('div','what',x.what),el('div','meta',new Date(x.time).toLocaleTimeString()));r.append(c)});
}
function refresh(){fetch('api/state',{credentials:'same-origin'}).then(function(r){return r.json()}).then(function(s){
  // Re-render every second (the countdowns move) unless the person is typing an answer.
  var typing=document.activeElement&&document.activeElement.tagName==='INPUT';
  if(!typing){version=s.version;render(s)}
}).catch(function(){})}
setInterval(refresh,400); // a new ask shows within half a second
})();
</script>
</body></html>
`
