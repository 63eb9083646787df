// Search in the site opened from the disk (file://), where browsers refuse Web Workers: the
// search worker runs in a hidden iframe instead. Material's offline plugin would load a shim for
// this from unpkg.com; this one ships with the site, so search works with no network at all.
// (Its name holds "iframe-worker", so the offline plugin adds no shim of its own.)
(function () {
  "use strict";
  if (location.protocol !== "file:") return;

  class IframeWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.queue = [];
      this.iframe = document.createElement("iframe");
      this.iframe.hidden = true;
      (document.body || document.documentElement).appendChild(this.iframe);
      const scope = this.iframe.contentWindow;
      // The worker's postMessage reaches this object's "message" listeners.
      scope.postMessage = (data) => {
        const event = new MessageEvent("message", { data: data });
        if (typeof this.onmessage === "function") this.onmessage(event);
        this.dispatchEvent(event);
      };
      scope.importScripts = () => {
        throw new Error("importScripts is not available in the file:// search worker");
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = () => {
        this.scope = scope;
        this.queue.splice(0).forEach((data) => this.postMessage(data));
      };
      scope.document.head.appendChild(script);
    }

    postMessage(data) {
      if (!this.scope) {
        this.queue.push(data);
        return;
      }
      this.scope.dispatchEvent(new this.scope.MessageEvent("message", { data: data }));
    }

    terminate() {
      this.iframe.remove();
    }
  }

  window.Worker = IframeWorker;
})();
